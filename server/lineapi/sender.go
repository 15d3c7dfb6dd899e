package lineapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/google/uuid"
	"github.com/line/line-bot-sdk-go/v8/linebot/messaging_api"

	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/task"
)

// Limits of the Messaging API that the sender keeps to.
const (
	// MaxMessages is how many messages one reply or push may carry.
	MaxMessages = 5
	// MaxTextLength is the longest text message, in UTF-16 code units
	// (LINE counts characters as its clients do).
	MaxTextLength = 5000
	// ReplyTokenTTL is how long after the event the sender still answers
	// with the event's reply token. LINE's tokens live about a minute;
	// ten seconds of margin keep a slow request from arriving with a
	// dead token and paying for a second round trip.
	ReplyTokenTTL = 50 * time.Second
)

// retryKeySpace is the UUID v5 namespace of push retry keys, so that a
// notification's key is the same in every process and on every try.
var retryKeySpace = uuid.MustParse("3f0c8a52-6d8e-4b61-9a57-4c1f2b7e9d10")

// RetryKey returns the X-Line-Retry-Key of the push of notification id: a
// UUID (LINE accepts nothing else) derived from the id alone, so that a
// push retried after a timeout, or sent by two workers that read the same
// outbox row, is delivered once.
func RetryKey(notificationID string) string {
	return uuid.NewSHA1(retryKeySpace, []byte(notificationID)).String()
}

// Sender returns the sender of the task service's notifications on LINE.
func (c *Channel) Sender() task.Sender { return sender{c} }

type sender struct{ c *Channel }

// Send delivers m: as a reply while the asking message's reply token is
// fresh (a reply is free, a push counts against the plan's quota), else as
// a push to n.Target keyed by n.ID. A reply has no retry key: when its
// answer is lost in transit, the retry finds the token used and pushes,
// and the person may read the message twice — the price of free replies.
func (s sender) Send(ctx context.Context, n store.Notification, m task.Message) error {
	c := s.c
	if n.Target == "" {
		return fmt.Errorf("%w: lineapi: notification %s has no target", task.ErrPermanent, n.ID)
	}
	msgs, err := c.messages(n, m)
	if err != nil {
		return err
	}
	log := c.log.With("workspace_id", n.WorkspaceID, "notification_id", n.ID, "kind", n.Kind)
	if m.ReplyToken != "" && !m.ReceivedAt.IsZero() && c.now().Sub(m.ReceivedAt) < ReplyTokenTTL {
		err := c.reply(ctx, m.ReplyToken, msgs)
		if err == nil {
			return nil
		}
		// A 400 on reply is nearly always the token: used by an earlier
		// answer, or expired in flight. The push below says whether the
		// messages themselves were wrong.
		if statusOf(err) != http.StatusBadRequest {
			return fmt.Errorf("lineapi: reply to notification %s: %w", n.ID, err)
		}
		log.Debug("line_reply_token_refused", "error", err)
	}
	if n.ID == "" {
		return fmt.Errorf("%w: lineapi: notification has no id to derive the push retry key from", task.ErrPermanent)
	}
	if err := c.push(ctx, n.Target, RetryKey(n.ID), msgs); err != nil {
		return fmt.Errorf("lineapi: push notification %s: %w", n.ID, err)
	}
	return nil
}

// messages renders m as LINE messages: the approval card as a Flex
// bubble, anything else as text.
func (c *Channel) messages(n store.Notification, m task.Message) ([]messaging_api.MessageInterface, error) {
	if n.Kind == task.KindApproval && m.Approval != nil {
		f, err := c.approvalFlex(*m.Approval)
		if err != nil {
			return nil, fmt.Errorf("%w: lineapi: notification %s: %w", task.ErrPermanent, n.ID, err)
		}
		return []messaging_api.MessageInterface{f}, nil
	}
	parts := splitText(m.Text, MaxTextLength, MaxMessages)
	if len(parts) == 0 {
		return nil, fmt.Errorf("%w: lineapi: notification %s has no text to send", task.ErrPermanent, n.ID)
	}
	return textMessages(parts), nil
}

func textMessages(parts []string) []messaging_api.MessageInterface {
	out := make([]messaging_api.MessageInterface, len(parts))
	for i, p := range parts {
		out[i] = &messaging_api.TextMessage{Text: p}
	}
	return out
}

// reply answers with a reply token.
func (c *Channel) reply(ctx context.Context, token string, msgs []messaging_api.MessageInterface) error {
	res, _, err := c.client(ctx).ReplyMessageWithHttpInfo(&messaging_api.ReplyMessageRequest{ReplyToken: token, Messages: msgs})
	return classify(res, err)
}

// push sends to a user, group or room, once per retry key.
func (c *Channel) push(ctx context.Context, to, retryKey string, msgs []messaging_api.MessageInterface) error {
	res, _, err := c.client(ctx).PushMessageWithHttpInfo(&messaging_api.PushMessageRequest{To: to, Messages: msgs}, retryKey)
	if res != nil && res.StatusCode == http.StatusConflict {
		// LINE answers 409 to a retry key it already accepted: the
		// messages went out on an earlier try.
		closeBody(res)
		return nil
	}
	return classify(res, err)
}

// APIError is a Messaging API call that LINE answered with an error status.
type APIError struct {
	Status int
	// Message is LINE's explanation (the SDK's text, with the body).
	Message string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("line api status %d: %s", e.Status, e.Message)
}

// Unwrap marks the statuses that retrying cannot mend: the 4xx except 429
// (rate limit) and 409 (handled by push).
func (e *APIError) Unwrap() error {
	if e.Status >= 400 && e.Status < 500 && e.Status != http.StatusTooManyRequests {
		return task.ErrPermanent
	}
	return nil
}

// classify turns the SDK's answer into nil, an *APIError (status known) or
// the transport's error (retryable).
func classify(res *http.Response, err error) error {
	if res != nil {
		defer closeBody(res)
	}
	if err == nil {
		return nil
	}
	if res == nil || res.StatusCode/100 == 2 {
		// No answer (network, context) or an answer we could not
		// decode: the message may or may not be out; retrying is what
		// the retry key is for.
		return err
	}
	return &APIError{Status: res.StatusCode, Message: strings.TrimSpace(err.Error())}
}

func statusOf(err error) int {
	var e *APIError
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

func closeBody(res *http.Response) {
	if res.Body != nil {
		_ = res.Body.Close()
	}
}

// splitText cuts s into at most max parts of at most size UTF-16 code
// units, at a line break or space in the second half of a part when there
// is one so words stay whole; a text longer than all of them loses its
// end, marked with an ellipsis.
func splitText(s string, size, max int) []string {
	s = strings.TrimSpace(s)
	var parts []string
	for s != "" && len(parts) < max {
		cut, units, lastBreak := len(s), 0, -1
		for i, r := range s {
			n := utf16.RuneLen(r)
			if n < 0 {
				n = 1 // invalid UTF-8 becomes U+FFFD, one unit
			}
			if units+n > size {
				cut = i
				break
			}
			units += n
			if (r == '\n' || r == ' ') && units > size/2 {
				lastBreak = i
			}
		}
		if cut < len(s) && lastBreak > 0 {
			cut = lastBreak
		}
		part := strings.TrimSpace(s[:cut])
		rest := strings.TrimSpace(s[cut:])
		if len(parts) == max-1 && rest != "" {
			part = truncate(s, size)
			rest = ""
		}
		if part != "" {
			parts = append(parts, part)
		}
		s = rest
	}
	return parts
}

// truncate shortens s to at most size UTF-16 code units, ending with "…"
// when it cut.
func truncate(s string, size int) string {
	if utf16Len(s) <= size {
		return s
	}
	units := 0
	for i, r := range s {
		n := max(utf16.RuneLen(r), 1)
		if units+n > size-1 { // keep one unit for the ellipsis
			return strings.TrimRight(s[:i], " \n") + "…"
		}
		units += n
	}
	return s
}

// utf16Len is the length of s as LINE counts it.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += max(utf16.RuneLen(r), 1)
	}
	return n
}
