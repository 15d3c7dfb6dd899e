package tool

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestJSONQuery(t *testing.T) {
	doc := `{"items":[{"name":"a","price":12},{"name":"b","price":3},{"name":"c","price":40}],"id":12345678901234567890}`
	tests := []struct {
		args string
		want string
	}{
		{`{"json":` + doc + `,"query":".items[] | select(.price > 10) | .name"}`, "\"a\"\n\"c\""},
		{`{"json":` + doc + `,"query":"[.items[].price] | add"}`, "55"},
		{`{"json":` + doc + `,"query":".id"}`, "12345678901234567890"}, // big integers keep their digits
		{`{"json":` + doc + `,"query":".items | map({(.name): .price}) | add"}`, `{"a":12,"b":3,"c":40}`},
		{`{"json":` + doc + `,"query":"empty"}`, ""},
		{`{"json":` + doc + `,"query":".items[0] | keys"}`, `["name","price"]`},
		{`{"json":` + string(mustJSON(t, doc)) + `,"query":".items | length"}`, "3"}, // JSON text in a string
		{`{"json":"plain text","query":"ascii_upcase"}`, `"PLAIN TEXT"`},
		{`{"json":[1,2,3],"query":".[] * 2"}`, "2\n4\n6"},
		{`{"json":null,"query":"$ENV | length"}`, "0"}, // no server environment
		{`{"json":null,"query":"env | keys"}`, "[]"},
		{`{"json":1,"query":"1, halt, 2"}`, "1"},
		{`{"json":{"s":"<b>&"},"query":".s"}`, `"<b>&"`},
	}
	for _, tt := range tests {
		res := call(t, JSONQuery{}, tt.args)
		if res.IsError || res.Content != tt.want {
			t.Errorf("json_query %s = %+v, want %q", tt.args, res, tt.want)
		}
	}
}

func mustJSON(t *testing.T, s string) []byte {
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestJSONQueryRejects(t *testing.T) {
	tests := []struct {
		args string
		want string
	}{
		{`{"json":{},"query":".a["}`, "invalid jq program"},
		{`{"json":{},"query":"nosuchfn"}`, "invalid jq program"},
		{`{"json":{},"query":"input"}`, "invalid jq program"},
		{`{"json":{},"query":"import \"x\" as x; ."}`, "invalid jq program"},
		{`{"json":{"a":"x"},"query":".a + 1"}`, "jq error after 0 result(s)"},
		{`{"json":[1],"query":".[], error(\"boom\")"}`, "jq error after 1 result(s): error: boom"},
		{`{"json":"{\"a\":","query":"."}`, "looks like JSON but does not parse"},
		{`{"query":"."}`, `missing required argument "json"`},
		{`{"json":{},"query":""}`, `"query"`},
		{`{"json":{},"query":3}`, `"query" must be string, not number`},
	}
	for _, tt := range tests {
		res := call(t, JSONQuery{}, tt.args)
		if !res.IsError || !strings.Contains(res.Content, tt.want) {
			t.Errorf("json_query %s = %+v, want error containing %q", tt.args, res, tt.want)
		}
	}
}

func TestJSONQueryLimits(t *testing.T) {
	start := time.Now()
	res := call(t, JSONQuery{Timeout: 100 * time.Millisecond}, `{"json":0,"query":"def f: f; f"}`)
	if !res.IsError || !strings.Contains(res.Content, "ran longer than 100ms") || time.Since(start) > 2*time.Second {
		t.Errorf("endless loop: %+v after %v, want a time-out error after about 100ms", res, time.Since(start))
	}

	start = time.Now()
	res = call(t, JSONQuery{MaxMemory: 16 << 20, Timeout: 20 * time.Second}, `{"json":0,"query":"[range(1e9)] | length"}`)
	if !res.IsError || !strings.Contains(res.Content, "too much memory") || time.Since(start) > 10*time.Second {
		t.Errorf("growing array: %+v after %v, want a memory error", res, time.Since(start))
	}

	res = call(t, JSONQuery{MaxOutputBytes: 20}, `{"json":0,"query":"range(100)"}`)
	if res.IsError || !strings.HasPrefix(res.Content, "0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n[output truncated after 10 result(s) at the 20-byte limit") {
		t.Errorf("long output = %+v", res)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (JSONQuery{}).Call(ctx, json.RawMessage(`{"json":0,"query":"def f: f; f"}`)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: err = %v, want context.Canceled", err)
	}
}
