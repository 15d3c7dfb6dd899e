package caldav_test

import (
	"context"
	"encoding/json"
	"testing"
)

// FuzzToolArgs: whatever a model writes, both tools answer with a Result
// (an error Result for bad input), never a panic or a Go error, and a
// successful answer is JSON. WithIdempotencyKey either fails or returns a
// JSON object with a uid.
func FuzzToolArgs(f *testing.F) {
	for _, seed := range []string{
		`{"summary":"Dentist","start":"2026-03-14T15:00:00+09:00","end":"2026-03-14T15:30:00+09:00","location":"Shibuya"}`,
		`{"summary":"x","start":"2026-03-14T09:00:00Z","uid":"a@b"}`,
		`{"summary":"x","start":"2026-03-14T09:00:00Z","end":"2026-03-14T08:00:00Z"}`,
		`{"from":"2026-03-01T00:00:00Z","to":"2026-03-08T00:00:00Z","limit":3}`,
		`{"from":"2026-03-01T00:00:00Z","to":"2028-03-08T00:00:00Z"}`,
		"```json\n{\"summary\":\"x\",}\n```",
		`{"summary":"a\u0000","start":"9999-12-31T23:59:59+14:00"}`,
		`{"limit":1e400}`,
		`null`, `[]`, `{`, ``,
	} {
		f.Add(seed)
	}
	e := newEnv(f)
	f.Fuzz(func(t *testing.T, args string) {
		for _, tl := range e.cal.Tools() {
			res, err := tl.Call(context.Background(), json.RawMessage(args))
			if err != nil {
				t.Fatalf("%s(%q): Go error %v, want a Result", tl.Name(), args, err)
			}
			if !res.IsError && !json.Valid([]byte(res.Content)) {
				t.Fatalf("%s(%q) succeeded with %q, not JSON", tl.Name(), args, res.Content)
			}
		}
		keyed, err := e.create.WithIdempotencyKey(json.RawMessage(args), "key")
		if err != nil {
			return
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(keyed, &m); err != nil {
			t.Fatalf("WithIdempotencyKey(%q) = %q, not a JSON object: %v", args, keyed, err)
		}
		if _, ok := m["uid"]; !ok {
			t.Fatalf("WithIdempotencyKey(%q) = %q, no uid", args, keyed)
		}
	})
}
