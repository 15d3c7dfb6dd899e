package caldav_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/tool"
	"github.com/agentcraftlab/agentcraft/tool/caldav"
	"github.com/agentcraftlab/agentcraft/tool/caldav/caldavtest"
)

type created struct {
	UID     string `json:"uid"`
	Href    string `json:"href"`
	Summary string `json:"summary"`
	Start   string `json:"start"`
	End     string `json:"end"`
}

func decodeCreated(t *testing.T, content string) created {
	t.Helper()
	var c created
	if err := json.Unmarshal([]byte(content), &c); err != nil {
		t.Fatalf("result %q is not the event JSON: %v", content, err)
	}
	return c
}

func mustTime(t testing.TB, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v.UTC()
}

const collectionPath = "/dav/alice/calendars/work/"

func TestCreateEvent(t *testing.T) {
	e := newEnv(t)
	res := call(t, e.create, `{"summary":"Dentist, then lunch; ok","start":"2026-03-14T15:00:00+09:00","end":"2026-03-14T15:30:00+09:00",`+
		`"description":"Bring the card.\nFloor 3","location":"Shibuya","uid":"dentist-1@test"}`)
	if res.IsError {
		t.Fatalf("create = %+v", res)
	}
	want := created{UID: "dentist-1@test", Href: collectionPath + "dentist-1@test.ics", Summary: "Dentist, then lunch; ok",
		Start: "2026-03-14T15:00:00+09:00", End: "2026-03-14T15:30:00+09:00"}
	if diff := cmp.Diff(want, decodeCreated(t, res.Content)); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	wantEvents := []caldavtest.Event{{
		UID: "dentist-1@test", Summary: "Dentist, then lunch; ok", Description: "Bring the card.\nFloor 3", Location: "Shibuya",
		Start: mustTime(t, "2026-03-14T06:00:00Z"), End: mustTime(t, "2026-03-14T06:30:00Z"),
	}}
	if diff := cmp.Diff(wantEvents, e.srv.Events()); diff != "" {
		t.Errorf("stored events (-want +got):\n%s", diff)
	}
}

// TestCreateEventDefaults: no end means one hour; no uid means a fresh
// one, so two calls make two events.
func TestCreateEventDefaults(t *testing.T) {
	e := newEnv(t)
	args := `{"summary":"Standup","start":"2026-03-14T09:00:00Z"}`
	a := decodeCreated(t, call(t, e.create, args).Content)
	b := decodeCreated(t, call(t, e.create, args).Content)
	if a.End != "2026-03-14T10:00:00Z" {
		t.Errorf("end = %q, want one hour after the start", a.End)
	}
	if a.UID == b.UID || !strings.HasSuffix(a.UID, "@agentcraft") {
		t.Errorf("uids %q and %q: want two different ones ending @agentcraft", a.UID, b.UID)
	}
	if n := len(e.srv.Events()); n != 2 {
		t.Errorf("%d events stored, want 2", n)
	}
}

// TestCreateEventIdempotent: a step re-run with the same idempotency key
// reaches the server again but leaves one event, and succeeds.
func TestCreateEventIdempotent(t *testing.T) {
	e := newEnv(t)
	args, err := e.create.WithIdempotencyKey(json.RawMessage(`{"summary":"Review","start":"2026-03-14T09:00:00Z"}`), "run-7/step-3")
	if err != nil {
		t.Fatal(err)
	}
	first := call(t, e.create, string(args))
	second := call(t, e.create, string(args))
	if first.IsError || second.IsError {
		t.Fatalf("calls = %+v, %+v, want two successes", first, second)
	}
	if first.Content != second.Content {
		t.Errorf("retry answered %s, first call %s: want the same", second.Content, first.Content)
	}
	uid := caldav.KeyUID("run-7/step-3")
	if got := decodeCreated(t, first.Content).UID; got != uid {
		t.Errorf("uid = %q, want KeyUID of the key %q", got, uid)
	}
	if n := e.srv.Puts(uid); n != 2 {
		t.Errorf("server saw %d PUTs of %s, want 2 (both calls reached it)", n, uid)
	}
	if got := e.srv.Events(); len(got) != 1 || got[0].UID != uid {
		t.Errorf("events = %+v, want the one event %s", got, uid)
	}
}

// TestCreateEventUIDConflict: the same uid with other content is not a
// retry and must not be reported as done.
func TestCreateEventUIDConflict(t *testing.T) {
	e := newEnv(t)
	if res := call(t, e.create, `{"summary":"A","start":"2026-03-14T09:00:00Z","uid":"same@test"}`); res.IsError {
		t.Fatalf("first = %+v", res)
	}
	for _, args := range []string{
		`{"summary":"B","start":"2026-03-14T09:00:00Z","uid":"same@test"}`,
		`{"summary":"A","start":"2026-03-14T10:00:00Z","uid":"same@test"}`,
		`{"summary":"A","start":"2026-03-14T09:00:00Z","end":"2026-03-14T09:30:00Z","uid":"same@test"}`,
	} {
		res := call(t, e.create, args)
		if !res.IsError || !strings.Contains(res.Content, `uid "same@test" already exists with different content`) {
			t.Errorf("create %s = %+v, want an error result about the existing uid", args, res)
		}
	}
	if got := e.srv.Events(); len(got) != 1 || got[0].Summary != "A" {
		t.Errorf("events = %+v, want the first event untouched", got)
	}
}

func TestWithIdempotencyKey(t *testing.T) {
	e := newEnv(t)
	key := "task-1/step-1"
	uid := caldav.KeyUID(key)
	for _, tt := range []struct{ args, want string }{
		{`{"summary":"x","start":"2026-03-14T09:00:00Z"}`, `{"start":"2026-03-14T09:00:00Z","summary":"x","uid":"` + uid + `"}`},
		{`{"summary":"x","uid":"mine@test"}`, `{"summary":"x","uid":"mine@test"}`},
		{`{"summary":"x","uid":""}`, `{"summary":"x","uid":"` + uid + `"}`},
		{`{"summary":"x","uid":null}`, `{"summary":"x","uid":"` + uid + `"}`},
		{``, `{"uid":"` + uid + `"}`},
		{"```json\n{\"summary\":\"x\",}\n```", `{"summary":"x","uid":"` + uid + `"}`},
	} {
		got, err := e.create.WithIdempotencyKey(json.RawMessage(tt.args), key)
		if err != nil {
			t.Errorf("WithIdempotencyKey(%s): %v", tt.args, err)
			continue
		}
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Errorf("WithIdempotencyKey(%s) = %s, not JSON", tt.args, got)
		}
		json.Unmarshal([]byte(tt.want), &w)
		if diff := cmp.Diff(w, g); diff != "" {
			t.Errorf("WithIdempotencyKey(%s) (-want +got):\n%s", tt.args, diff)
		}
	}
	if want := "8254c329a92850f6d539dd376f4816ee@agentcraft"; caldav.KeyUID("k") != want {
		t.Errorf("KeyUID(k) = %q, want %q (printf k | sha256sum | cut -c1-32)", caldav.KeyUID("k"), want)
	}
	for _, args := range []string{`[1]`, `"x"`, `{bad`} {
		if _, err := e.create.WithIdempotencyKey(json.RawMessage(args), key); err == nil {
			t.Errorf("WithIdempotencyKey(%s) succeeded, want an error", args)
		}
	}
	if _, err := e.create.WithIdempotencyKey(json.RawMessage(`{}`), ""); err == nil {
		t.Error("WithIdempotencyKey with an empty key succeeded, want an error")
	}
}

func TestUndo(t *testing.T) {
	e := newEnv(t)
	args := json.RawMessage(`{"summary":"Review","start":"2026-03-14T09:00:00Z","uid":"undo-me@test"}`)
	res := call(t, e.create, string(args))
	payload, err := e.create.UndoOf(args, res)
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]string
	if err := json.Unmarshal(payload, &p); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"href": collectionPath + "undo-me@test.ics", "uid": "undo-me@test"}, p); diff != "" {
		t.Errorf("payload (-want +got):\n%s", diff)
	}
	if err := e.create.Undo(context.Background(), payload); err != nil {
		t.Fatalf("undo: %v", err)
	}
	if got := e.srv.Events(); len(got) != 0 {
		t.Errorf("events after undo = %+v, want none", got)
	}
	// Compensation retried after a crash: the event is gone, still a success.
	if err := e.create.Undo(context.Background(), payload); err != nil {
		t.Errorf("second undo: %v, want success", err)
	}
	if n := e.srv.Deletes("undo-me@test"); n != 2 {
		t.Errorf("server saw %d DELETEs, want 2", n)
	}
}

func TestUndoOfRefuses(t *testing.T) {
	e := newEnv(t)
	for _, res := range []tool.Result{
		{Content: `"summary" is blank`, IsError: true},
		{Content: `not json`},
		{Content: `{"uid":"x"}`},
	} {
		if p, err := e.create.UndoOf(nil, res); err == nil {
			t.Errorf("UndoOf(%+v) = %s, want an error", res, p)
		}
	}
}

// TestUndoStaysInCollection: a payload altered in storage cannot make
// Undo delete outside the calendar with its credentials.
func TestUndoStaysInCollection(t *testing.T) {
	e := newEnv(t)
	for _, payload := range []string{
		`{"href":"/dav/alice/calendars/other/x.ics","uid":"x"}`,
		`{"href":"/dav/alice/calendars/work/","uid":"x"}`,
		`{"href":"/dav/alice/calendars/work/../other/x.ics","uid":"x"}`,
		`{"href":"https://evil.example/x.ics","uid":"x"}`,
		`{"href":"/dav/alice/calendars/work/x.ics","uid":"x","extra":1}`,
		`not json`,
	} {
		if err := e.create.Undo(context.Background(), json.RawMessage(payload)); err == nil {
			t.Errorf("Undo(%s) succeeded, want an error", payload)
		}
	}
}

func TestCreateEventBadArgs(t *testing.T) {
	e := newEnv(t)
	for _, tt := range []struct{ args, want string }{
		{`{"start":"2026-03-14T09:00:00Z"}`, `"summary"`},
		{`{"summary":"   ","start":"2026-03-14T09:00:00Z"}`, `"summary" is blank`},
		{`{"summary":"` + strings.Repeat("a", 501) + `","start":"2026-03-14T09:00:00Z"}`, `"summary": maxLength`},
		{`{"summary":"a\nb","start":"2026-03-14T09:00:00Z"}`, `"summary" must be one line`},
		{`{"summary":"a\u0000b","start":"2026-03-14T09:00:00Z"}`, `"summary" contains the control character`},
		{`{"summary":"x"}`, `"start"`},
		{`{"summary":"x","start":"tomorrow at 3"}`, `"start" "tomorrow at 3" is not an RFC 3339 time`},
		{`{"summary":"x","start":"2026-03-14 09:00"}`, `"start"`},
		{`{"summary":"x","start":"2026-03-14T09:00:00Z","end":"soon"}`, `"end" "soon" is not an RFC 3339 time`},
		{`{"summary":"x","start":"2026-03-14T09:00:00Z","end":"2026-03-14T08:00:00Z"}`, `"end" 2026-03-14T08:00:00Z is not after "start"`},
		{`{"summary":"x","start":"2026-03-14T09:00:00Z","end":"2026-03-14T09:00:00Z"}`, `is not after "start"`},
		{`{"summary":"x","start":"2026-03-14T09:00:00Z","colour":"red"}`, `unknown argument "colour"`},
		{`{"summary":1,"start":"2026-03-14T09:00:00Z"}`, `"summary" must be string`},
		{`{"summary":"x","start":"2026-03-14T09:00:00Z","uid":"../../x"}`, `"uid"`},
		{`{"summary":"x","start":"2026-03-14T09:00:00Z","uid":"a/b"}`, `"uid"`},
		{`[]`, `must be a JSON object`},
	} {
		res := call(t, e.create, tt.args)
		if !res.IsError || !strings.Contains(res.Content, tt.want) {
			t.Errorf("create %.80s = %+v, want an error result containing %q", tt.args, res, tt.want)
		}
	}
	if got := e.srv.Events(); len(got) != 0 {
		t.Errorf("bad arguments stored events %+v", got)
	}
}
