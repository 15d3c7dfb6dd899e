package lineapi_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/server/lineapi"
	"github.com/agentcraftlab/agentcraft/server/lineapi/linetest"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/task"
)

func TestWebhookRefusesBadSignature(t *testing.T) {
	body := linetest.Body(botID, linetest.TextEvent("01EV1", alice, "book a room"))
	for _, tc := range []struct {
		name, sig, want string
	}{
		{"missing", "", "missing x-line-signature"},
		{"wrong secret", linetest.Sign("another-secret", body), "does not match"},
		{"not base64", "%%%", "does not match"},
		{"other body", linetest.Sign(secret, append(bytes.Clone(body), ' ')), "does not match"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			w := e.post(body, tc.sig)
			if w.Code != http.StatusUnauthorized {
				t.Fatalf("status = %d, want 401", w.Code)
			}
			if msg := errorBody(t, w); !strings.Contains(msg, tc.want) {
				t.Errorf("error %q does not say %q", msg, tc.want)
			}
			if n := len(e.tasks.Submitted()); n != 0 {
				t.Errorf("Submit called %d times for an unsigned request", n)
			}
			if n := e.line.Calls(); n != 0 {
				t.Errorf("LINE called %d times for an unsigned request", n)
			}
		})
	}
}

func TestWebhookVerifyRequest(t *testing.T) {
	e := newEnv(t)
	e.deliver(t) // no events: LINE's "Verify" button
	if n := len(e.tasks.Submitted()); n != 0 {
		t.Errorf("Submit called %d times", n)
	}
}

func TestWebhookSubmitsText(t *testing.T) {
	at := time.Date(2026, 12, 3, 8, 59, 58, 123e6, time.UTC)
	group, room := linetest.GroupID("sales"), linetest.RoomID("standup")
	for _, tc := range []struct {
		name   string
		opt    []linetest.EventOption
		target string
	}{
		{"one to one", nil, alice},
		{"group", []linetest.EventOption{linetest.InGroup(group)}, group},
		{"room", []linetest.EventOption{linetest.InRoom(room)}, room},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			tok := e.line.IssueReplyToken()
			opts := append([]linetest.EventOption{linetest.WithReplyToken(tok), linetest.At(at)}, tc.opt...)
			e.deliver(t, linetest.TextEvent("01EVTEXT", alice, "send the invoice to ACME", opts...))
			want := []task.Request{{
				WorkspaceID: workspace,
				Text:        "send the invoice to ACME",
				Source:      "line",
				SourceRef:   "01EVTEXT",
				Requester:   task.Requester{UserID: "user_alice", Role: identity.RoleMember, Actor: "line:" + alice},
				ReplyTo:     task.Address{Channel: "line", Target: tc.target, ReplyToken: tok, ReceivedAt: at},
			}}
			if diff := cmp.Diff(want, e.tasks.Submitted()); diff != "" {
				t.Errorf("Submit (-want +got):\n%s", diff)
			}
			if r := e.line.Replies(); len(r) != 0 {
				t.Errorf("replied %v to a plain submit; results go through the Sender", r)
			}
		})
	}
}

func TestWebhookRedeliveryIsDeduplicated(t *testing.T) {
	e := newEnv(t)
	seen := map[string]bool{}
	e.tasks.outcome = func(r task.Request) (task.Outcome, error) {
		dup := seen[r.SourceRef]
		seen[r.SourceRef] = true
		return task.Outcome{Task: store.Task{ID: "task_1"}, Duplicate: dup, Question: "Which ACME, Tokyo or Osaka?"}, nil
	}
	e.deliver(t, linetest.TextEvent("01EVDUP", alice, "invoice ACME", linetest.WithReplyToken(e.line.IssueReplyToken())))
	e.deliver(t, linetest.TextEvent("01EVDUP", alice, "invoice ACME", linetest.WithReplyToken(e.line.IssueReplyToken()), linetest.Redelivered()))

	got := e.tasks.Submitted()
	if len(got) != 2 || got[0].SourceRef != "01EVDUP" || got[1].SourceRef != "01EVDUP" {
		t.Fatalf("Submit got %+v, want the event twice with SourceRef 01EVDUP", got)
	}
	if diff := cmp.Diff([]string{"Which ACME, Tokyo or Osaka?"}, e.replyTexts()); diff != "" {
		t.Errorf("replies (-want +got); the duplicate must send nothing:\n%s", diff)
	}
}

func TestWebhookUnlinkedUserGetsLinkHint(t *testing.T) {
	e := newEnv(t)
	e.deliver(t, linetest.TextEvent("01EVEVE", eve, "delete everything", linetest.WithReplyToken(e.line.IssueReplyToken())))
	if n := len(e.tasks.Submitted()); n != 0 {
		t.Errorf("Submit called %d times for an unlinked user", n)
	}
	texts := e.replyTexts()
	if len(texts) != 1 || !strings.Contains(texts[0], "Sign in to the studio once with LINE") {
		t.Errorf("replies %q, want the link hint naming LINE sign-in", texts)
	}
}

func TestWebhookRepliesQuestion(t *testing.T) {
	e := newEnv(t)
	e.tasks.outcome = func(task.Request) (task.Outcome, error) {
		return task.Outcome{Question: "For which month?"}, nil
	}
	tok := e.line.IssueReplyToken()
	e.deliver(t, linetest.TextEvent("01EVQ", alice, "send the report", linetest.WithReplyToken(tok)))
	r := e.line.Replies()
	if len(r) != 1 || r[0].ReplyToken != tok {
		t.Fatalf("replies %+v, want one with the event's token", r)
	}
	if diff := cmp.Diff([]string{"For which month?"}, e.replyTexts()); diff != "" {
		t.Errorf("reply (-want +got):\n%s", diff)
	}
}

func TestWebhookSubmitFailureIsAnswered(t *testing.T) {
	e := newEnv(t)
	e.tasks.outcome = func(task.Request) (task.Outcome, error) { return task.Outcome{}, errors.New("database is down") }
	e.deliver(t, linetest.TextEvent("01EVERR", alice, "hello", linetest.WithReplyToken(e.line.IssueReplyToken())))
	texts := e.replyTexts()
	if len(texts) != 1 || !strings.Contains(texts[0], "try again") || strings.Contains(texts[0], "database") {
		t.Errorf("replies %q, want an apology without internals", texts)
	}
}

func TestWebhookIgnoresOtherEvents(t *testing.T) {
	e := newEnv(t)
	tok := e.line.IssueReplyToken()
	e.deliver(t,
		linetest.FollowEvent("01EVF", alice, linetest.WithReplyToken(e.line.IssueReplyToken())),
		linetest.StickerEvent("01EVS", alice, linetest.WithReplyToken(e.line.IssueReplyToken())),
		linetest.Event{"type": "somethingNew", "webhookEventId": "01EVX", "timestamp": 1, "mode": "active"},
		linetest.Event{"type": "join", "webhookEventId": "01EVJ", "timestamp": 1, "mode": "active",
			"source": map[string]any{"type": "group", "groupId": linetest.GroupID("g")}, "replyToken": e.line.IssueReplyToken()},
		linetest.TextEvent("01EVSB", alice, "standby text", linetest.Standby()),
		linetest.PostbackEvent("01EVP", alice, "richmenu=home", linetest.WithReplyToken(e.line.IssueReplyToken())),
		linetest.TextEvent("01EVT", alice, "and a real one", linetest.WithReplyToken(tok)),
	)
	got := e.tasks.Submitted()
	if len(got) != 1 || got[0].SourceRef != "01EVT" {
		t.Errorf("Submit got %+v, want only the active text event 01EVT", got)
	}
	if n := len(e.tasks.Decided()); n != 0 {
		t.Errorf("Decide called %d times for a postback that is no decision", n)
	}
	if r := e.line.Replies(); len(r) != 0 {
		t.Errorf("replied %+v to ignored events", r)
	}
}

func TestWebhookPostbackDecides(t *testing.T) {
	for _, approve := range []bool{true, false} {
		t.Run(fmt.Sprint("approve=", approve), func(t *testing.T) {
			e := newEnv(t)
			e.deliver(t, linetest.PostbackEvent("01EVPB", bob, lineapi.PostbackData("appr_42", approve), linetest.WithReplyToken(e.line.IssueReplyToken())))
			want := []task.Decision{{
				WorkspaceID: workspace,
				ApprovalID:  "appr_42",
				Approve:     approve,
				Approver:    task.Requester{UserID: "user_bob", Role: identity.RoleAdmin, Actor: "line:" + bob},
			}}
			if diff := cmp.Diff(want, e.tasks.Decided()); diff != "" {
				t.Errorf("Decide (-want +got):\n%s", diff)
			}
			wantReply := "Rejected: send the invoice to ACME"
			if approve {
				wantReply = "Approved: send the invoice to ACME"
			}
			if diff := cmp.Diff([]string{wantReply}, e.replyTexts()); diff != "" {
				t.Errorf("reply (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWebhookPostbackRefusals(t *testing.T) {
	for _, tc := range []struct {
		name     string
		user     string
		approval store.Approval
		err      error
		want     string
	}{
		{"not allowed", alice, store.Approval{}, fmt.Errorf("decide: %w", task.ErrNotAllowed), "your role (member) may not approve"},
		{"self approval", alice, store.Approval{}, task.ErrSelfApproval, "someone else has to approve"},
		{"expired", bob, store.Approval{}, task.ErrExpired, "expired"},
		{"not found", bob, store.Approval{}, fmt.Errorf("get approval: %w", store.ErrNotFound), "no longer exists"},
		{"decided otherwise before", bob, store.Approval{ID: "appr_1", Status: store.ApprovalRejected, Summary: "pay 10k"}, nil, "already rejected: pay 10k"},
		{"conflict with the row", bob, store.Approval{ID: "appr_1", Status: store.ApprovalExpired, Summary: "pay 10k"}, store.ErrConflict, "expired: pay 10k"},
		{"unlinked user", eve, store.Approval{}, nil, "Sign in to the studio once with LINE"},
		{"broken service", bob, store.Approval{}, errors.New("connection refused"), "try again"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.tasks.decide = func(task.Decision) (store.Approval, error) { return tc.approval, tc.err }
			e.deliver(t, linetest.PostbackEvent("01EVPB", tc.user, lineapi.PostbackData("appr_1", true), linetest.WithReplyToken(e.line.IssueReplyToken())))
			texts := e.replyTexts()
			if len(texts) != 1 || !strings.Contains(texts[0], tc.want) {
				t.Errorf("reply %q, want one saying %q", texts, tc.want)
			}
			if tc.user == eve && len(e.tasks.Decided()) != 0 {
				t.Errorf("Decide called for an unlinked user")
			}
		})
	}
}

func TestWebhookRepeatedDecisionRepliesStatus(t *testing.T) {
	e := newEnv(t)
	decidedAt := e.now.Add(-time.Minute)
	e.tasks.decide = func(d task.Decision) (store.Approval, error) {
		// Idempotent: the second press returns the approval as it stands.
		return store.Approval{ID: d.ApprovalID, Status: store.ApprovalApproved, Summary: "pay 10k", DecidedAt: &decidedAt}, nil
	}
	for i := range 2 {
		e.deliver(t, linetest.PostbackEvent(fmt.Sprint("01EVRP", i), bob, lineapi.PostbackData("appr_1", true), linetest.WithReplyToken(e.line.IssueReplyToken())))
	}
	if diff := cmp.Diff([]string{"Approved: pay 10k", "Approved: pay 10k"}, e.replyTexts()); diff != "" {
		t.Errorf("replies (-want +got):\n%s", diff)
	}
}

func TestWebhookBadBodies(t *testing.T) {
	e := newEnv(t)
	big := bytes.Repeat([]byte(" "), lineapi.MaxBodyBytes+1)
	if w := e.post(big, linetest.Sign(secret, big)); w.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized body: status %d, want 413", w.Code)
	} else {
		errorBody(t, w)
	}
	for _, body := range []string{`{"events": [`, `[]`, `{"events": [{"mode": "active"}]}`, `{"events": "x"}`} {
		w := e.post([]byte(body), linetest.Sign(secret, []byte(body)))
		if w.Code != http.StatusBadRequest {
			t.Errorf("body %s: status %d, want 400", body, w.Code)
			continue
		}
		errorBody(t, w)
	}
	r := e.post(nil, "")
	if r.Code != http.StatusUnauthorized {
		t.Errorf("empty unsigned body: status %d, want 401", r.Code)
	}
	if n := len(e.tasks.Submitted()); n != 0 {
		t.Errorf("Submit called %d times", n)
	}
}

func TestWebhookMethod(t *testing.T) {
	e := newEnv(t)
	r := httptestRequest(http.MethodGet)
	w := newRecorder()
	e.ch.Webhook().ServeHTTP(w, r)
	if w.Code != http.StatusMethodNotAllowed {
		t.Errorf("GET: status %d, want 405", w.Code)
	}
}

func TestWebhookUnwiredChannel(t *testing.T) {
	ch, err := lineapi.New(lineapi.Options{ChannelSecret: secret, ChannelAccessToken: token, WorkspaceID: workspace})
	if err != nil {
		t.Fatal(err)
	}
	body := linetest.Body(botID, linetest.TextEvent("01EV", alice, "hi"))
	r := httptestRequest(http.MethodPost)
	r.Body = readCloser(body)
	r.Header.Set("x-line-signature", linetest.Sign(secret, body))
	w := newRecorder()
	ch.Webhook().ServeHTTP(w, r)
	if w.Code != http.StatusServiceUnavailable {
		t.Errorf("status %d, want 503 from a channel built without Tasks and Accounts", w.Code)
	}
}

// The events are handled on a context of their own: a LINE that hangs up
// must not cancel the submit half-way.
func TestWebhookDetachesFromRequest(t *testing.T) {
	e := newEnv(t)
	var ctxErr error
	e.tasks.outcome = func(task.Request) (task.Outcome, error) { return task.Outcome{}, nil }
	tasks := &ctxTasks{fakeTasks: e.tasks, seen: &ctxErr}
	ch, err := lineapi.New(lineapi.Options{ChannelSecret: secret, ChannelAccessToken: token, WorkspaceID: workspace, APIBaseURL: e.line.URL(), Tasks: tasks, Accounts: accounts()})
	if err != nil {
		t.Fatal(err)
	}
	body := linetest.Body(botID, linetest.TextEvent("01EV", alice, "hi"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := httptestRequest(http.MethodPost).WithContext(ctx)
	r.Body = readCloser(body)
	r.Header.Set("x-line-signature", linetest.Sign(secret, body))
	w := newRecorder()
	ch.Webhook().ServeHTTP(w, r)
	if ctxErr != nil {
		t.Errorf("Submit saw a cancelled context: %v", ctxErr)
	}
	if !tasks.hadDeadline {
		t.Error("Submit's context had no deadline; the event handling must be bounded")
	}
}

type ctxTasks struct {
	*fakeTasks
	seen        *error
	hadDeadline bool
}

func (c *ctxTasks) Submit(ctx context.Context, r task.Request) (task.Outcome, error) {
	*c.seen = ctx.Err()
	_, c.hadDeadline = ctx.Deadline()
	return c.fakeTasks.Submit(ctx, r)
}

func TestNewNamesMissingOptions(t *testing.T) {
	_, err := lineapi.New(lineapi.Options{ChannelAccessToken: token})
	if err == nil {
		t.Fatal("New accepted options without a secret and a workspace")
	}
	for _, want := range []string{"ChannelSecret", "WorkspaceID", "channels.line.workspace"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	if strings.Contains(err.Error(), "ChannelAccessToken") {
		t.Errorf("error %q names ChannelAccessToken, which was set", err)
	}
	if _, err := lineapi.New(lineapi.Options{ChannelSecret: secret, ChannelAccessToken: token, WorkspaceID: workspace, APIBaseURL: "not a url"}); err == nil {
		t.Error("New accepted APIBaseURL \"not a url\"")
	}
}
