package lineapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/server/lineapi"
	"github.com/agentcraftlab/agentcraft/server/lineapi/linetest"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/task"
)

const (
	secret    = "test-channel-secret"
	token     = "test-channel-access-token"
	workspace = "ws_1"
)

// fakeTasks records the calls of the webhook and answers as scripted.
type fakeTasks struct {
	// mu guards every field below.
	mu        sync.Mutex
	submitted []task.Request
	decided   []task.Decision
	outcome   func(task.Request) (task.Outcome, error)
	decide    func(task.Decision) (store.Approval, error)
}

func (f *fakeTasks) Submit(_ context.Context, r task.Request) (task.Outcome, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.submitted = append(f.submitted, r)
	if f.outcome != nil {
		return f.outcome(r)
	}
	return task.Outcome{Task: store.Task{ID: "task_" + r.SourceRef}}, nil
}

func (f *fakeTasks) Decide(_ context.Context, d task.Decision) (store.Approval, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.decided = append(f.decided, d)
	if f.decide != nil {
		return f.decide(d)
	}
	st := store.ApprovalRejected
	if d.Approve {
		st = store.ApprovalApproved
	}
	return store.Approval{ID: d.ApprovalID, WorkspaceID: d.WorkspaceID, Summary: "send the invoice to ACME", Status: st}, nil
}

func (f *fakeTasks) Submitted() []task.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]task.Request(nil), f.submitted...)
}

func (f *fakeTasks) Decided() []task.Decision {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]task.Decision(nil), f.decided...)
}

// fakeAccounts links LINE user ids to accounts.
type fakeAccounts map[string]struct {
	userID string
	role   identity.Role
}

func (f fakeAccounts) LookupLINE(_ context.Context, workspaceID, lineUserID string) (string, identity.Role, bool, error) {
	if workspaceID != workspace {
		return "", "", false, nil
	}
	a, ok := f[lineUserID]
	return a.userID, a.role, ok, nil
}

var (
	alice = linetest.UserID("alice") // linked, member
	bob   = linetest.UserID("bob")   // linked, admin
	eve   = linetest.UserID("eve")   // not linked
	botID = linetest.UserID("bot")   // the webhook's destination
)

func accounts() fakeAccounts {
	return fakeAccounts{
		alice: {"user_alice", identity.RoleMember},
		bob:   {"user_bob", identity.RoleAdmin},
	}
}

// env is a Channel wired to the fake LINE platform and fakes of the
// services.
type env struct {
	line  *linetest.Server
	tasks *fakeTasks
	ch    *lineapi.Channel
	now   time.Time
}

func newEnv(t testing.TB) *env {
	t.Helper()
	e := &env{
		line:  linetest.New(t, token),
		tasks: &fakeTasks{},
		now:   time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC),
	}
	ch, err := lineapi.New(lineapi.Options{
		ChannelSecret:      secret,
		ChannelAccessToken: token,
		APIBaseURL:         e.line.URL(),
		WorkspaceID:        workspace,
		Tasks:              e.tasks,
		Accounts:           accounts(),
		HTTPClient:         e.line.Client(),
		Now:                func() time.Time { return e.now },
	})
	if err != nil {
		t.Fatal(err)
	}
	e.ch = ch
	return e
}

// post sends body to the webhook signed with sig ("" sends none).
func (e *env) post(body []byte, sig string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/api/line/webhook", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	if sig != "" {
		r.Header.Set("x-line-signature", sig)
	}
	w := httptest.NewRecorder()
	e.ch.Webhook().ServeHTTP(w, r)
	return w
}

// deliver posts events signed with the channel secret and wants 200.
func (e *env) deliver(t testing.TB, events ...linetest.Event) {
	t.Helper()
	body := linetest.Body(botID, events...)
	if w := e.post(body, linetest.Sign(secret, body)); w.Code != http.StatusOK {
		t.Fatalf("webhook answered %d %s, want 200", w.Code, w.Body)
	}
}

// replyTexts returns the texts of the replies delivered so far.
func (e *env) replyTexts() []string {
	var out []string
	for _, r := range e.line.Replies() {
		for _, m := range r.Messages {
			out = append(out, m.Texts()...)
		}
	}
	return out
}

// errorBody decodes the webhook's JSON error answer.
func errorBody(t testing.TB, w *httptest.ResponseRecorder) string {
	t.Helper()
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	var b struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &b); err != nil || b.Error.Message == "" {
		t.Fatalf("body %q is not a JSON error: %v", w.Body, err)
	}
	return b.Error.Message
}

func httptestRequest(method string) *http.Request {
	return httptest.NewRequest(method, "/api/line/webhook", http.NoBody)
}

func newRecorder() *httptest.ResponseRecorder { return httptest.NewRecorder() }

func readCloser(b []byte) io.ReadCloser { return io.NopCloser(bytes.NewReader(b)) }
