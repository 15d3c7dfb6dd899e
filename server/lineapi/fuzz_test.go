package lineapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/server/lineapi"
	"github.com/agentcraftlab/agentcraft/server/lineapi/linetest"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/task"
)

// quietTasks answers like the task service without keeping the calls, for
// fuzzing and benchmarks that make millions of them.
type quietTasks struct{}

func (quietTasks) Submit(_ context.Context, r task.Request) (task.Outcome, error) {
	if strings.HasSuffix(r.Text, "?") {
		return task.Outcome{Question: "what do you mean?"}, nil
	}
	return task.Outcome{Task: store.Task{ID: "task_1"}}, nil
}

func (quietTasks) Decide(_ context.Context, d task.Decision) (store.Approval, error) {
	return store.Approval{ID: d.ApprovalID, Status: store.ApprovalApproved, Summary: "s"}, nil
}

func quietChannel(tb testing.TB) *lineapi.Channel {
	tb.Helper()
	line := linetest.New(tb, token)
	ch, err := lineapi.New(lineapi.Options{
		ChannelSecret: secret, ChannelAccessToken: token, WorkspaceID: workspace,
		APIBaseURL: line.URL(), HTTPClient: line.Client(),
		Tasks: quietTasks{}, Accounts: accounts(),
	})
	if err != nil {
		tb.Fatal(err)
	}
	return ch
}

// FuzzWebhook feeds arbitrary bodies, signed and not, to the webhook: it
// must never panic and always answer 2xx or 4xx with a JSON body.
func FuzzWebhook(f *testing.F) {
	for _, b := range [][]byte{
		linetest.Body(botID),
		linetest.Body(botID, linetest.TextEvent("01A", alice, "hello?", linetest.InGroup(linetest.GroupID("g")))),
		linetest.Body(botID, linetest.TextEvent("01B", eve, "hi", linetest.WithReplyToken("rt"), linetest.Redelivered())),
		linetest.Body(botID, linetest.PostbackEvent("01C", bob, lineapi.PostbackData("a1", true))),
		linetest.Body(botID, linetest.PostbackEvent("01D", bob, "approval=&decision=maybe"), linetest.FollowEvent("01E", alice)),
		linetest.Body(botID, linetest.StickerEvent("01F", alice, linetest.InRoom(linetest.RoomID("r")))),
		[]byte(`{"events":[{"type":"message","source":null,"message":null}]}`),
		[]byte(`{"events":[{"type":"postback","postback":null,"deliveryContext":null}]}`),
		[]byte(`{"events":[{"type":"message","message":{"type":"text","text":7}}]}`),
		[]byte(`{"events":null}`),
		[]byte(`null`),
		[]byte(``),
		[]byte(`{"events":[{}]}`),
	} {
		f.Add(b, true)
		f.Add(b, false)
	}
	ch := quietChannel(f)
	h := ch.Webhook()
	f.Fuzz(func(t *testing.T, body []byte, signed bool) {
		r := httptest.NewRequest(http.MethodPost, "/api/line/webhook", bytes.NewReader(body))
		if signed {
			r.Header.Set("x-line-signature", linetest.Sign(secret, body))
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code < 200 || w.Code >= 500 || (w.Code >= 300 && w.Code < 400) {
			t.Fatalf("status %d for body %q", w.Code, body)
		}
		if !signed && w.Code != http.StatusUnauthorized {
			t.Fatalf("unsigned body answered %d, want 401", w.Code)
		}
		if ct := w.Header().Get("Content-Type"); ct != "application/json" {
			t.Fatalf("Content-Type %q", ct)
		}
		if !json.Valid(w.Body.Bytes()) {
			t.Fatalf("answer %q is not JSON", w.Body)
		}
	})
}

// BenchmarkWebhook measures the webhook's own work per text message:
// signature, parse, account lookup and submit to a fake (no LINE call).
func BenchmarkWebhook(b *testing.B) {
	ch := quietChannel(b)
	h := ch.Webhook()
	for _, bc := range []struct {
		name   string
		events []linetest.Event
		signed bool
	}{
		{"unsigned", []linetest.Event{linetest.TextEvent("01A", alice, "send the invoice to ACME")}, false},
		{"text", []linetest.Event{linetest.TextEvent("01A", alice, "send the invoice to ACME")}, true},
		{"text x10", func() []linetest.Event {
			var ev []linetest.Event
			for range 10 {
				ev = append(ev, linetest.TextEvent("01A", alice, "send the invoice to ACME", linetest.InGroup(linetest.GroupID("g"))))
			}
			return ev
		}(), true},
	} {
		body := linetest.Body(botID, bc.events...)
		sig := linetest.Sign(secret, body)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				r := httptest.NewRequest(http.MethodPost, "/api/line/webhook", bytes.NewReader(body))
				if bc.signed {
					r.Header.Set("x-line-signature", sig)
				}
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if w.Code != http.StatusOK && w.Code != http.StatusUnauthorized {
					b.Fatalf("status %d", w.Code)
				}
			}
		})
	}
}
