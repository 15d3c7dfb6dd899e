package caldav_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/tool"
	"github.com/agentcraftlab/agentcraft/tool/caldav"
	"github.com/agentcraftlab/agentcraft/tool/caldav/caldavtest"
)

const (
	user     = "alice"
	password = "s3cret-pa55"
)

// env is a calendar on a caldavtest server and its two tools.
type env struct {
	srv    *caldavtest.Server
	cal    *caldav.Calendar
	create createTool
	list   tool.Tool
}

// createTool is what the control plane sees of calendar_create_event.
type createTool interface {
	tool.Undoable
	tool.KeyedArgs
}

func newEnv(t testing.TB) *env {
	t.Helper()
	srv := caldavtest.New(t, user, password)
	cal, err := caldav.New(caldav.Config{URL: srv.URL(), Username: user, Password: password})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{srv: srv, cal: cal}
	e.create, e.list = toolsOf(t, cal)
	return e
}

func toolsOf(t testing.TB, cal *caldav.Calendar) (createTool, tool.Tool) {
	t.Helper()
	var create createTool
	var list tool.Tool
	for _, tl := range cal.Tools() {
		switch tl.Name() {
		case "calendar_create_event":
			c, ok := tl.(createTool)
			if !ok {
				t.Fatalf("calendar_create_event (%T) does not implement tool.Undoable and tool.KeyedArgs", tl)
			}
			create = c
		case "calendar_list_events":
			list = tl
		default:
			t.Fatalf("unexpected tool %q", tl.Name())
		}
	}
	if create == nil || list == nil {
		t.Fatalf("Tools() = %v, want calendar_create_event and calendar_list_events", cal.Tools())
	}
	return create, list
}

func call(t testing.TB, tl tool.Tool, args string) tool.Result {
	t.Helper()
	res, err := tl.Call(context.Background(), json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s(%s): %v", tl.Name(), args, err)
	}
	return res
}

func TestToolsDescribeThemselves(t *testing.T) {
	e := newEnv(t)
	var reg tool.Registry
	for _, tl := range e.cal.Tools() {
		if tl.Capability() != tool.CapabilityMedium {
			t.Errorf("%s capability = %v, want medium", tl.Name(), tl.Capability())
		}
		if err := reg.Register(tl); err != nil {
			t.Errorf("register %s: %v", tl.Name(), err)
		}
		var schema map[string]any
		if err := json.Unmarshal(tl.Schema(), &schema); err != nil {
			t.Errorf("%s schema is not JSON: %v", tl.Name(), err)
		}
	}
}

func TestNewRejectsBadURL(t *testing.T) {
	for _, tt := range []struct{ url, want string }{
		{"", "Config.URL is empty"},
		{"/dav/calendars/alice/work/", "not an absolute http or https URL"},
		{"ftp://host/dav/", "not an absolute http or https URL"},
		{"https://", "not an absolute http or https URL"},
		{"https://alice:hunter2@host/dav/", "carries credentials"},
		{"https://host/dav/?x=1", "query or fragment"},
		{"https://host/%zz", "not a URL"},
	} {
		_, err := caldav.New(caldav.Config{URL: tt.url})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%q) error = %v, want it to contain %q", tt.url, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("New(%q) error %q shows the password", tt.url, err)
		}
	}
}

// TestNewAddsTrailingSlash: a collection URL written without its slash
// still puts events inside the collection, not next to it.
func TestNewAddsTrailingSlash(t *testing.T) {
	srv := caldavtest.New(t, user, password)
	cal, err := caldav.New(caldav.Config{URL: strings.TrimSuffix(srv.URL(), "/"), Username: user, Password: password})
	if err != nil {
		t.Fatal(err)
	}
	create, _ := toolsOf(t, cal)
	res := call(t, create, `{"summary":"x","start":"2026-03-14T15:00:00Z","uid":"slash@test"}`)
	if res.IsError {
		t.Fatalf("create = %+v", res)
	}
	if got := srv.Events(); len(got) != 1 {
		t.Fatalf("events = %+v, want one", got)
	}
}

func TestConfigRedactsSecrets(t *testing.T) {
	cfg := caldav.Config{URL: "https://host/dav/", Username: user, Password: password, Token: "tok-123"}
	var b strings.Builder
	slog.New(slog.NewTextHandler(&b, nil)).Info("config", "caldav", cfg)
	for _, s := range []string{fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg), b.String()} {
		if strings.Contains(s, password) || strings.Contains(s, "tok-123") {
			t.Errorf("printed config %q shows a secret", s)
		}
		if !strings.Contains(s, user) {
			t.Errorf("printed config %q lost the username", s)
		}
	}
}

// TestBearerToken: Token is sent as a bearer token instead of basic auth.
func TestBearerToken(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("Authorization")
		w.WriteHeader(http.StatusCreated)
	}))
	defer srv.Close()
	cal, err := caldav.New(caldav.Config{URL: srv.URL + "/cal/", Username: "u", Password: "p", Token: "tok-123"})
	if err != nil {
		t.Fatal(err)
	}
	create, _ := toolsOf(t, cal)
	if res := call(t, create, `{"summary":"x","start":"2026-03-14T15:00:00Z"}`); res.IsError {
		t.Fatalf("create = %+v", res)
	}
	if got != "Bearer tok-123" {
		t.Errorf("Authorization = %q, want the bearer token", got)
	}
}

// TestWrongPassword: refused credentials are an error result naming the
// status and the path, never the password.
func TestWrongPassword(t *testing.T) {
	srv := caldavtest.New(t, user, password)
	const wrong = "wrong-pa55word"
	cal, err := caldav.New(caldav.Config{URL: srv.URL(), Username: user, Password: wrong})
	if err != nil {
		t.Fatal(err)
	}
	create, list := toolsOf(t, cal)
	for _, tt := range []struct {
		tl   tool.Tool
		args string
	}{
		{create, `{"summary":"x","start":"2026-03-14T15:00:00Z"}`},
		{list, `{"from":"2026-03-01T00:00:00Z","to":"2026-04-01T00:00:00Z"}`},
	} {
		res := call(t, tt.tl, tt.args)
		if !res.IsError || !strings.Contains(res.Content, "401") || !strings.Contains(res.Content, "/dav/alice/calendars/work/") {
			t.Errorf("%s with a wrong password = %+v, want an error result naming 401 and the path", tt.tl.Name(), res)
		}
		if strings.Contains(res.Content, wrong) || strings.Contains(res.Content, password) {
			t.Errorf("%s error %q shows a password", tt.tl.Name(), res.Content)
		}
	}
	payload := json.RawMessage(`{"href":"/dav/alice/calendars/work/x.ics","uid":"x"}`)
	err = create.Undo(context.Background(), payload)
	if err == nil || !strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), wrong) {
		t.Errorf("Undo with a wrong password = %v, want an error naming 401 without the password", err)
	}
	if len(srv.Events()) != 0 {
		t.Errorf("events = %+v, want none", srv.Events())
	}
}

// TestLargeResponseRefused: a body over MaxResponseBytes fails the call
// instead of being read into memory.
func TestLargeResponseRefused(t *testing.T) {
	big := strings.Repeat("x", caldav.MaxResponseBytes+10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPut:
			w.WriteHeader(http.StatusPreconditionFailed)
		case http.MethodGet:
			w.Header().Set("Content-Type", "text/calendar")
			fmt.Fprint(w, big)
		case "REPORT":
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusMultiStatus)
			fmt.Fprint(w, `<?xml version="1.0"?><multistatus xmlns="DAV:"><response><href>/x</href><!--`+big+`--></response></multistatus>`)
		}
	}))
	defer srv.Close()
	cal, err := caldav.New(caldav.Config{URL: srv.URL + "/cal/"})
	if err != nil {
		t.Fatal(err)
	}
	create, list := toolsOf(t, cal)
	for _, tt := range []struct {
		tl   tool.Tool
		args string
	}{
		{create, `{"summary":"x","start":"2026-03-14T15:00:00Z","uid":"x"}`},
		{list, `{"from":"2026-03-01T00:00:00Z","to":"2026-04-01T00:00:00Z"}`},
	} {
		res := call(t, tt.tl, tt.args)
		if !res.IsError || !strings.Contains(res.Content, "larger than 1048576 bytes") {
			t.Errorf("%s with a huge answer = %.300s, want an error result about its size", tt.tl.Name(), res.Content)
		}
	}
}
