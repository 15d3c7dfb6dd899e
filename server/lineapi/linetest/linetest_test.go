package linetest_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/line/line-bot-sdk-go/v8/linebot/webhook"

	"github.com/agentcraftlab/agentcraft/server/lineapi/linetest"
)

const tok = "token-1"

var to = linetest.UserID("alice")

// call posts body to path of s and returns the status and LINE's message.
func call(t *testing.T, s *linetest.Server, path, bearer, retryKey string, body any) (int, string) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, s.URL()+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	if retryKey != "" {
		req.Header.Set("X-Line-Retry-Key", retryKey)
	}
	res, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var m struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(raw, &m)
	return res.StatusCode, m.Message
}

func text(s string) map[string]any { return map[string]any{"type": "text", "text": s} }

func push(msgs ...any) map[string]any { return map[string]any{"to": to, "messages": msgs} }

func bubble(footer ...any) map[string]any {
	return map[string]any{"type": "flex", "altText": "alt", "contents": map[string]any{
		"type":   "bubble",
		"body":   map[string]any{"type": "box", "layout": "vertical", "contents": []any{map[string]any{"type": "text", "text": "hello"}}},
		"footer": map[string]any{"type": "box", "layout": "horizontal", "contents": footer},
	}}
}

func button(label, data string) map[string]any {
	return map[string]any{"type": "button", "action": map[string]any{"type": "postback", "label": label, "data": data}}
}

const key1 = "123e4567-e89b-12d3-a456-426614174000"

func TestAuth(t *testing.T) {
	s := linetest.New(t, tok)
	for _, bearer := range []string{"", "wrong"} {
		if st, _ := call(t, s, "/v2/bot/message/push", bearer, key1, push(text("hi"))); st != http.StatusUnauthorized {
			t.Errorf("bearer %q: status %d, want 401", bearer, st)
		}
	}
	if len(s.Pushes()) != 0 {
		t.Error("an unauthenticated push was delivered")
	}
}

func TestReplyTokenOnceAndIssued(t *testing.T) {
	s := linetest.New(t, tok)
	issued := s.IssueReplyToken()
	body := func(tk string) any { return map[string]any{"replyToken": tk, "messages": []any{text("hi")}} }
	if st, msg := call(t, s, "/v2/bot/message/reply", tok, "", body("made-up")); st != http.StatusBadRequest || msg != "Invalid reply token" {
		t.Errorf("unissued token: %d %q, want 400 Invalid reply token", st, msg)
	}
	if st, msg := call(t, s, "/v2/bot/message/reply", tok, "", body(issued)); st != http.StatusOK {
		t.Fatalf("issued token: %d %q", st, msg)
	}
	if st, _ := call(t, s, "/v2/bot/message/reply", tok, "", body(issued)); st != http.StatusBadRequest {
		t.Errorf("second use of a token: status %d, want 400", st)
	}
	want := []linetest.Reply{{ReplyToken: issued, Messages: []linetest.Message{{Type: "text", Text: "hi", JSON: json.RawMessage(`{"text":"hi","type":"text"}`)}}}}
	if diff := cmp.Diff(want, s.Replies()); diff != "" {
		t.Errorf("replies (-want +got):\n%s", diff)
	}
}

func TestPushRetryKey(t *testing.T) {
	s := linetest.New(t, tok)
	if st, _ := call(t, s, "/v2/bot/message/push", tok, "not-a-uuid", push(text("hi"))); st != http.StatusBadRequest {
		t.Errorf("non-UUID key: status %d, want 400", st)
	}
	if st, msg := call(t, s, "/v2/bot/message/push", tok, key1, push(text("hi"))); st != http.StatusOK {
		t.Fatalf("push: %d %s", st, msg)
	}
	if st, _ := call(t, s, "/v2/bot/message/push", tok, key1, push(text("hi"))); st != http.StatusConflict {
		t.Errorf("repeated key: status %d, want 409", st)
	}
	if p := s.Pushes(); len(p) != 1 || p[0].RetryKey != key1 || p[0].To != to {
		t.Errorf("pushes %+v, want one keyed %s", p, key1)
	}
}

func TestLimits(t *testing.T) {
	long := func(n int) string { return strings.Repeat("a", n) }
	six := []any{text("1"), text("2"), text("3"), text("4"), text("5"), text("6")}
	big := make([]any, 0, 400)
	for range 400 {
		big = append(big, button("b", long(80)))
	}
	for _, tc := range []struct {
		name string
		body any
		ok   bool
	}{
		{"five messages", push(six[:5]...), true},
		{"six messages", push(six...), false},
		{"no messages", push(), false},
		{"text of 5000", push(text(long(5000))), true},
		{"text of 5001", push(text(long(5001))), false},
		{"emoji count twice", push(text(strings.Repeat("😀", 2501))), false},
		{"empty text", push(text("")), false},
		{"unknown field", push(map[string]any{"type": "text", "text": "hi", "txet": "typo"}), false},
		{"unknown envelope field", map[string]any{"to": to, "messages": []any{text("hi")}, "notify": true}, false},
		{"bad to", map[string]any{"to": "alice", "messages": []any{text("hi")}}, false},
		{"sticker not modelled", push(map[string]any{"type": "sticker", "packageId": "1", "stickerId": "1"}), false},
		{"flex", push(bubble(button("Approve", "approval=1&decision=approve"))), true},
		{"altText of 401", push(func() any { b := bubble(); b["altText"] = long(401); return b }()), false},
		{"label of 21", push(bubble(button(long(21), "x=1"))), false},
		{"button without label", push(bubble(button("", "x=1"))), false},
		{"data of 300 bytes", push(bubble(button("ok", long(300)))), true},
		{"data of 301 bytes", push(bubble(button("ok", long(301)))), false},
		{"bubble over 30 KB", push(bubble(big...)), false},
		{"unknown component", push(bubble(map[string]any{"type": "blink"})), false},
		{"box without layout", push(bubble(map[string]any{"type": "box", "contents": []any{}})), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := linetest.New(t, tok)
			st, msg := call(t, s, "/v2/bot/message/push", tok, key1, tc.body)
			if (st == http.StatusOK) != tc.ok {
				t.Errorf("status %d (%s), want ok=%v", st, msg, tc.ok)
			}
			if got := len(s.Pushes()); got != map[bool]int{true: 1, false: 0}[tc.ok] {
				t.Errorf("%d pushes recorded", got)
			}
		})
	}
}

func TestFailNext(t *testing.T) {
	s := linetest.New(t, tok)
	s.FailNext(http.StatusTooManyRequests)
	s.FailNext(http.StatusInternalServerError)
	for _, want := range []int{429, 500, 200, 409} {
		if st, _ := call(t, s, "/v2/bot/message/push", tok, key1, push(text("hi"))); st != want {
			t.Errorf("status %d, want %d", st, want)
		}
	}
	if len(s.Pushes()) != 1 {
		t.Errorf("%d pushes, want 1", len(s.Pushes()))
	}
	if st, _ := call(t, s, "/v2/bot/message/multicast", tok, "", push(text("hi"))); st != http.StatusNotFound {
		t.Errorf("unserved path: status %d, want 404", st)
	}
}

func TestPostbacks(t *testing.T) {
	s := linetest.New(t, tok)
	if st, msg := call(t, s, "/v2/bot/message/push", tok, key1, push(bubble(button("Yes", "a=1"), button("No", "a=2")))); st != 200 {
		t.Fatal(st, msg)
	}
	got := s.Pushes()[0].Messages[0].Postbacks()
	want := []linetest.Postback{{Label: "Yes", Data: "a=1"}, {Label: "No", Data: "a=2"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("postbacks (-want +got):\n%s", diff)
	}
}

// The builders must produce what the SDK parses as LINE's events, signed
// as the SDK verifies.
func TestEventsParseWithSDK(t *testing.T) {
	at := time.UnixMilli(1764752400123)
	group := linetest.GroupID("g")
	body := linetest.Body(linetest.UserID("bot"),
		linetest.TextEvent("01A", to, "hello", linetest.InGroup(group), linetest.WithReplyToken("rt"), linetest.Redelivered(), linetest.At(at)),
		linetest.PostbackEvent("01B", to, "approval=1&decision=approve", linetest.InRoom(linetest.RoomID("r"))),
		linetest.FollowEvent("01C", to),
		linetest.StickerEvent("01D", to),
	)
	if !webhook.ValidateSignature("s3cret", linetest.Sign("s3cret", body), body) {
		t.Fatal("Sign does not produce what the SDK verifies")
	}
	var cb webhook.CallbackRequest
	if err := json.Unmarshal(body, &cb); err != nil {
		t.Fatal(err)
	}
	if len(cb.Events) != 4 {
		t.Fatalf("%d events", len(cb.Events))
	}
	m, ok := cb.Events[0].(webhook.MessageEvent)
	if !ok {
		t.Fatalf("event 0 is %T", cb.Events[0])
	}
	src, _ := m.Source.(webhook.GroupSource)
	txt, _ := m.Message.(webhook.TextMessageContent)
	if src.GroupId != group || src.UserId != to || txt.Text != "hello" || m.ReplyToken != "rt" ||
		!m.DeliveryContext.IsRedelivery || m.Timestamp != at.UnixMilli() || m.WebhookEventId != "01A" {
		t.Errorf("text event parsed as %+v", m)
	}
	p, ok := cb.Events[1].(webhook.PostbackEvent)
	if !ok || p.Postback.Data != "approval=1&decision=approve" {
		t.Errorf("event 1 parsed as %+v", cb.Events[1])
	}
	if _, ok := p.Source.(webhook.RoomSource); !ok {
		t.Errorf("postback source %T, want a room", p.Source)
	}
	if _, ok := cb.Events[2].(webhook.FollowEvent); !ok {
		t.Errorf("event 2 is %T", cb.Events[2])
	}
	if m, ok := cb.Events[3].(webhook.MessageEvent); !ok {
		t.Errorf("event 3 is %T", cb.Events[3])
	} else if _, ok := m.Message.(webhook.StickerMessageContent); !ok {
		t.Errorf("event 3 message is %T", m.Message)
	}
}
