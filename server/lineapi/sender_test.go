package lineapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/agentcraftlab/agentcraft/server/lineapi"
	"github.com/agentcraftlab/agentcraft/server/lineapi/linetest"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/task"
)

func note(id, kind string) store.Notification {
	return store.Notification{ID: id, WorkspaceID: workspace, TaskID: "task_1", Channel: "line", Target: alice, Kind: kind}
}

func TestSendRepliesWhileTokenIsFresh(t *testing.T) {
	e := newEnv(t)
	tok := e.line.IssueReplyToken()
	m := task.Message{Text: "The invoice was sent.", ReplyToken: tok, ReceivedAt: e.now.Add(-30 * time.Second)}
	if err := e.ch.Sender().Send(context.Background(), note("ntf_1", task.KindResult), m); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"The invoice was sent."}, e.replyTexts()); diff != "" {
		t.Errorf("replies (-want +got):\n%s", diff)
	}
	if p := e.line.Pushes(); len(p) != 0 {
		t.Errorf("pushed %+v although the reply token was fresh", p)
	}
}

func TestSendPushesWhenTokenIsStale(t *testing.T) {
	e := newEnv(t)
	tok := e.line.IssueReplyToken()
	m := task.Message{Text: "Done.", ReplyToken: tok, ReceivedAt: e.now.Add(-lineapi.ReplyTokenTTL)}
	if err := e.ch.Sender().Send(context.Background(), note("ntf_2", task.KindResult), m); err != nil {
		t.Fatal(err)
	}
	if r := e.line.Replies(); len(r) != 0 {
		t.Errorf("replied %+v with a stale token", r)
	}
	p := e.line.Pushes()
	if len(p) != 1 {
		t.Fatalf("pushes %+v, want one", p)
	}
	if p[0].To != alice || p[0].Messages[0].Text != "Done." {
		t.Errorf("push %+v, want Done. to alice", p[0])
	}
	key, err := uuid.Parse(p[0].RetryKey)
	if err != nil || key.String() != p[0].RetryKey {
		t.Errorf("retry key %q is not a canonical UUID: %v", p[0].RetryKey, err)
	}
	if p[0].RetryKey != lineapi.RetryKey("ntf_2") || lineapi.RetryKey("ntf_2") == lineapi.RetryKey("ntf_3") {
		t.Errorf("retry key %q is not derived from the notification id alone", p[0].RetryKey)
	}
}

func TestSendFallsBackToPushWhenReplyTokenIsRefused(t *testing.T) {
	e := newEnv(t)
	tok := e.line.IssueReplyToken()
	n := note("ntf_3", task.KindResult)
	// The webhook already answered with the token (a question, say).
	if err := e.ch.Sender().Send(context.Background(), note("ntf_q", task.KindQuestion), task.Message{Text: "Which one?", ReplyToken: tok, ReceivedAt: e.now}); err != nil {
		t.Fatal(err)
	}
	if err := e.ch.Sender().Send(context.Background(), n, task.Message{Text: "Result.", ReplyToken: tok, ReceivedAt: e.now}); err != nil {
		t.Fatalf("Send with a used token: %v", err)
	}
	p := e.line.Pushes()
	if len(p) != 1 || p[0].Messages[0].Text != "Result." || p[0].RetryKey != lineapi.RetryKey("ntf_3") {
		t.Errorf("pushes %+v, want Result. keyed by ntf_3", p)
	}
}

func TestSendTwiceDeliversOnce(t *testing.T) {
	e := newEnv(t)
	n := note("ntf_4", task.KindResult)
	for i := range 2 {
		if err := e.ch.Sender().Send(context.Background(), n, task.Message{Text: "Once only."}); err != nil {
			t.Fatalf("send %d: %v", i+1, err)
		}
	}
	if p := e.line.Pushes(); len(p) != 1 {
		t.Errorf("%d pushes delivered, want 1 (the retry key's 409 is success)", len(p))
	}
	if c := e.line.Calls(); c != 2 {
		t.Errorf("%d calls to LINE, want 2 (the second answered 409)", c)
	}
}

func TestSendApprovalCard(t *testing.T) {
	e := newEnv(t)
	exp := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	card := &task.ApprovalCard{ID: "appr_77", TaskID: "task_1", TaskTitle: "Invoice ACME", Summary: "Send invoice #1234 (¥120,000) to ACME", Capability: "high", ExpiresAt: &exp}
	m := task.Message{Text: "Approval needed", Approval: card}
	if err := e.ch.Sender().Send(context.Background(), note("ntf_5", task.KindApproval), m); err != nil {
		t.Fatal(err)
	}
	p := e.line.Pushes()
	if len(p) != 1 || len(p[0].Messages) != 1 {
		t.Fatalf("pushes %+v, want one message", p)
	}
	msg := p[0].Messages[0]
	if msg.Type != "flex" || !strings.HasPrefix(msg.AltText, "Approval needed: Send invoice #1234") {
		t.Errorf("message type %q altText %q, want a flex card", msg.Type, msg.AltText)
	}
	texts := strings.Join(msg.Texts(), "\n")
	for _, want := range []string{"Invoice ACME", "Send invoice #1234", "high", "2026-12-03 10:00 UTC"} {
		if !strings.Contains(texts, want) {
			t.Errorf("card texts %q do not show %q", texts, want)
		}
	}
	pbs := msg.Postbacks()
	if len(pbs) != 2 {
		t.Fatalf("postbacks %+v, want Approve and Reject", pbs)
	}
	var got []string
	for _, pb := range pbs {
		q, err := url.ParseQuery(pb.Data)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, pb.Label+" "+pb.DisplayText+" "+q.Get("approval")+" "+q.Get("decision"))
	}
	want := []string{"Approve Approve appr_77 approve", "Reject Reject appr_77 reject"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("buttons (-want +got):\n%s", diff)
	}
}

// A button's data comes back as a postback; the webhook must decide the
// approval the card showed.
func TestApprovalCardRoundTrip(t *testing.T) {
	e := newEnv(t)
	card := &task.ApprovalCard{ID: "appr_rt", TaskTitle: "T", Summary: "S"}
	if err := e.ch.Sender().Send(context.Background(), note("ntf_rt", task.KindApproval), task.Message{Approval: card}); err != nil {
		t.Fatal(err)
	}
	reject := e.line.Pushes()[0].Messages[0].Postbacks()[1]
	e.deliver(t, linetest.PostbackEvent("01EVRT", bob, reject.Data, linetest.WithReplyToken(e.line.IssueReplyToken())))
	d := e.tasks.Decided()
	if len(d) != 1 || d[0].ApprovalID != "appr_rt" || d[0].Approve {
		t.Errorf("Decide got %+v, want a rejection of appr_rt", d)
	}
}

func TestSendApprovalCardWithinLimits(t *testing.T) {
	e := newEnv(t)
	long := strings.Repeat("とても長い説明。", 2000) // 16000 runes
	card := &task.ApprovalCard{ID: "appr_long", TaskTitle: long, Summary: long, Capability: "medium"}
	if err := e.ch.Sender().Send(context.Background(), note("ntf_6", task.KindApproval), task.Message{Approval: card}); err != nil {
		t.Fatalf("a long card must be cut to fit, not refused: %v", err)
	}
	msg := e.line.Pushes()[0].Messages[0]
	if n := len([]rune(msg.AltText)); n > 400 || !strings.HasSuffix(msg.AltText, "…") {
		t.Errorf("altText of %d characters, want at most 400 ending in …", n)
	}
	huge := &task.ApprovalCard{ID: strings.Repeat("x", 300)}
	err := e.ch.Sender().Send(context.Background(), note("ntf_7", task.KindApproval), task.Message{Approval: huge})
	if !errors.Is(err, task.ErrPermanent) {
		t.Errorf("an approval id too long for postback data: err %v, want ErrPermanent", err)
	}
}

func TestSendSplitsLongText(t *testing.T) {
	e := newEnv(t)
	para := strings.Repeat("word ", 1000) + "end.\n" // 5005 characters a line
	text := strings.Repeat(para, 3)
	if err := e.ch.Sender().Send(context.Background(), note("ntf_8", task.KindResult), task.Message{Text: text}); err != nil {
		t.Fatal(err)
	}
	msgs := e.line.Pushes()[0].Messages
	if len(msgs) != 4 {
		t.Errorf("%d messages, want 4 (15015 characters cut at line breaks or spaces)", len(msgs))
	}
	var joined []string
	for _, m := range msgs {
		joined = append(joined, m.Text)
	}
	if got := strings.Join(strings.Fields(strings.Join(joined, " ")), " "); got != strings.Join(strings.Fields(text), " ") {
		t.Error("the parts do not add up to the text")
	}

	// Beyond five messages the end is cut, visibly.
	e2 := newEnv(t)
	emoji := strings.Repeat("😀", 20000) // 40000 UTF-16 units
	if err := e2.ch.Sender().Send(context.Background(), note("ntf_9", task.KindResult), task.Message{Text: emoji}); err != nil {
		t.Fatal(err)
	}
	msgs = e2.line.Pushes()[0].Messages
	if len(msgs) != 5 || !strings.HasSuffix(msgs[4].Text, "…") {
		t.Errorf("%d messages, want 5 with the last ending in …", len(msgs))
	}
}

func TestSendErrors(t *testing.T) {
	for _, tc := range []struct {
		status    int
		permanent bool
	}{
		{http.StatusBadRequest, true},
		{http.StatusForbidden, true},
		{http.StatusNotFound, true},
		{http.StatusTooManyRequests, false},
		{http.StatusInternalServerError, false},
		{http.StatusServiceUnavailable, false},
	} {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			e := newEnv(t)
			e.line.FailNext(tc.status)
			n := note("ntf_err", task.KindResult)
			err := e.ch.Sender().Send(context.Background(), n, task.Message{Text: "hello"})
			if err == nil {
				t.Fatal("Send succeeded on an injected failure")
			}
			if got := errors.Is(err, task.ErrPermanent); got != tc.permanent {
				t.Errorf("errors.Is(%v, ErrPermanent) = %v, want %v", err, got, tc.permanent)
			}
			var apiErr *lineapi.APIError
			if !errors.As(err, &apiErr) || apiErr.Status != tc.status {
				t.Errorf("error %v carries no APIError with status %d", err, tc.status)
			}
			if tc.permanent {
				return
			}
			// Retryable: the next try delivers.
			if err := e.ch.Sender().Send(context.Background(), n, task.Message{Text: "hello"}); err != nil {
				t.Fatalf("retry: %v", err)
			}
			if p := e.line.Pushes(); len(p) != 1 {
				t.Errorf("%d pushes after the retry, want 1", len(p))
			}
		})
	}
}

func TestSendNetworkErrorIsRetryable(t *testing.T) {
	ch, err := lineapi.New(lineapi.Options{ChannelSecret: secret, ChannelAccessToken: token, WorkspaceID: workspace, APIBaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	err = ch.Sender().Send(context.Background(), note("ntf_net", task.KindResult), task.Message{Text: "hi"})
	if err == nil || errors.Is(err, task.ErrPermanent) {
		t.Errorf("err %v, want a retryable error", err)
	}
}

func TestSendRefusesWhatCannotBeSent(t *testing.T) {
	e := newEnv(t)
	for name, tc := range map[string]struct {
		n store.Notification
		m task.Message
	}{
		"no text":   {note("ntf_a", task.KindResult), task.Message{Text: "  "}},
		"no target": {store.Notification{ID: "ntf_b", Kind: task.KindResult}, task.Message{Text: "hi"}},
	} {
		if err := e.ch.Sender().Send(context.Background(), tc.n, tc.m); !errors.Is(err, task.ErrPermanent) {
			t.Errorf("%s: err %v, want ErrPermanent", name, err)
		}
	}
	if c := e.line.Calls(); c != 0 {
		t.Errorf("%d calls to LINE for messages that cannot be sent", c)
	}
}
