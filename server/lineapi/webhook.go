package lineapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/line/line-bot-sdk-go/v8/linebot/webhook"

	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/server/apierr"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/task"
)

// MaxBodyBytes is the largest webhook body read; LINE's are a few KB.
const MaxBodyBytes = 1 << 20

// SignatureHeader carries base64(HMAC-SHA256(channel secret, body)).
const SignatureHeader = "x-line-signature"

// Replies of the webhook to the person on LINE.
const (
	// Signing in to the studio with LINE Login (an auth.oidc provider
	// whose issuer is https://access.line.me) links the account.
	linkHint          = "Your LINE account is not linked to AgentCraft yet. Sign in to the studio once with LINE (the LINE Login button), then send your request again."
	submitFailedReply = "Sorry, I could not take that request right now. Please try again in a moment."
	decideFailedReply = "Sorry, your decision could not be recorded right now. Please try again in a moment."
)

// Webhook returns the handler of LINE's webhook (POST /api/line/webhook).
// The route is public: LINE cannot send our credentials, so the
// x-line-signature over the raw body is the only authentication, and
// nothing is parsed before it checks out.
func (c *Channel) Webhook() http.Handler { return http.HandlerFunc(c.serveWebhook) }

func (c *Channel) serveWebhook(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		apierr.Write(w, &apierr.Error{Status: http.StatusMethodNotAllowed, Type: apierr.TypeInvalidRequest, Code: "method_not_allowed", Message: "the LINE webhook accepts POST only"})
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			apierr.Write(w, &apierr.Error{Status: http.StatusRequestEntityTooLarge, Type: apierr.TypeInvalidRequest, Code: "body_too_large", Message: "webhook body is larger than 1 MiB"})
			return
		}
		apierr.Write(w, apierr.BadRequest("", "read webhook body: "+err.Error()))
		return
	}
	sig := r.Header.Get(SignatureHeader)
	if sig == "" {
		apierr.Write(w, apierr.Unauthorized("missing x-line-signature header; the LINE webhook is authenticated by LINE's signature only"))
		return
	}
	// ValidateSignature compares with hmac.Equal, in constant time.
	if !webhook.ValidateSignature(c.secret, sig, body) {
		apierr.Write(w, apierr.Unauthorized("x-line-signature does not match the body; check channels.line.channel_secret"))
		return
	}
	var cb webhook.CallbackRequest
	if err := json.Unmarshal(body, &cb); err != nil {
		apierr.Write(w, apierr.BadRequest("", "webhook body is not a LINE callback: "+err.Error()))
		return
	}
	if len(cb.Events) > 0 && (c.tasks == nil || c.accounts == nil) {
		c.log.Error("line_webhook_unwired", "workspace_id", c.workspaceID)
		apierr.Write(w, &apierr.Error{Status: http.StatusServiceUnavailable, Type: apierr.TypeServer, Code: "unavailable", Message: "the LINE channel was built without Tasks and Accounts"})
		return
	}
	// Events are handled before answering, so that a 200 means they were
	// taken, but on a context of their own: LINE may hang up first, and a
	// task half-submitted because the request went away helps nobody.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), c.timeout)
	defer cancel()
	for _, ev := range cb.Events {
		c.handleEvent(ctx, ev)
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, "{}\n")
}

// event is what the handlers need of a message or postback event.
type event struct {
	id         string // webhookEventId
	replyToken string
	source     webhook.SourceInterface
	at         time.Time
	redelivery bool
}

func (c *Channel) handleEvent(ctx context.Context, ev webhook.EventInterface) {
	switch e := ev.(type) {
	case webhook.MessageEvent:
		if e.Mode == webhook.EventMode_STANDBY {
			c.log.Debug("line_event_ignored", "workspace_id", c.workspaceID, "webhook_event_id", e.WebhookEventId, "reason", "standby")
			return
		}
		text, ok := e.Message.(webhook.TextMessageContent)
		if !ok {
			c.log.Debug("line_event_ignored", "workspace_id", c.workspaceID, "webhook_event_id", e.WebhookEventId, "type", "message", "message_type", messageType(e.Message))
			return
		}
		c.handleText(ctx, event{
			id: e.WebhookEventId, replyToken: e.ReplyToken, source: e.Source,
			at: time.UnixMilli(e.Timestamp), redelivery: e.DeliveryContext != nil && e.DeliveryContext.IsRedelivery,
		}, text.Text)
	case webhook.PostbackEvent:
		if e.Mode == webhook.EventMode_STANDBY {
			c.log.Debug("line_event_ignored", "workspace_id", c.workspaceID, "webhook_event_id", e.WebhookEventId, "reason", "standby")
			return
		}
		data := ""
		if e.Postback != nil {
			data = e.Postback.Data
		}
		c.handlePostback(ctx, event{
			id: e.WebhookEventId, replyToken: e.ReplyToken, source: e.Source,
			at: time.UnixMilli(e.Timestamp), redelivery: e.DeliveryContext != nil && e.DeliveryContext.IsRedelivery,
		}, data)
	default:
		c.log.Debug("line_event_ignored", "workspace_id", c.workspaceID, "type", ev.GetType())
	}
}

func messageType(m webhook.MessageContentInterface) string {
	if m == nil {
		return ""
	}
	return m.GetType()
}

// sourceIDs returns the LINE user who acted and the address answers go to:
// the user in a 1:1 chat, else the group or room.
func sourceIDs(s webhook.SourceInterface) (userID, target string) {
	switch s := s.(type) {
	case webhook.UserSource:
		return s.UserId, s.UserId
	case webhook.GroupSource:
		return s.UserId, s.GroupId
	case webhook.RoomSource:
		return s.UserId, s.RoomId
	}
	return "", ""
}

// requester resolves the LINE user to the linked account. ok is false
// when there is none (or the event names no user); the caller has then
// answered the person with the link hint.
func (c *Channel) requester(ctx context.Context, log *slog.Logger, ev event, lineUserID string) (task.Requester, bool) {
	if lineUserID == "" {
		log.Info("line_event_no_user")
		c.answer(ctx, log, ev, linkHint)
		return task.Requester{}, false
	}
	userID, role, ok, err := c.accounts.LookupLINE(ctx, c.workspaceID, lineUserID)
	if err != nil {
		log.Error("line_account_lookup_failed", "error", err)
		c.answer(ctx, log, ev, submitFailedReply)
		return task.Requester{}, false
	}
	if !ok {
		log.Info("line_user_not_linked")
		c.answer(ctx, log, ev, linkHint)
		return task.Requester{}, false
	}
	return task.Requester{UserID: userID, Role: role, Actor: "line:" + lineUserID}, true
}

func (c *Channel) handleText(ctx context.Context, ev event, text string) {
	lineUserID, target := sourceIDs(ev.source)
	log := c.log.With("workspace_id", c.workspaceID, "webhook_event_id", ev.id, "line_user_id", lineUserID)
	req, ok := c.requester(ctx, log, ev, lineUserID)
	if !ok {
		return
	}
	out, err := c.tasks.Submit(ctx, task.Request{
		WorkspaceID: c.workspaceID,
		Text:        text,
		Source:      "line",
		SourceRef:   ev.id,
		Requester:   req,
		ReplyTo:     task.Address{Channel: "line", Target: target, ReplyToken: ev.replyToken, ReceivedAt: ev.at},
	})
	if err != nil {
		log.Error("line_submit_failed", "error", err, "redelivery", ev.redelivery)
		c.answer(ctx, log, ev, submitFailedReply)
		return
	}
	log = log.With("task_id", out.Task.ID)
	switch {
	case out.Duplicate:
		// A redelivery of a request already taken: its answers are on
		// their way through the Sender.
		log.Debug("line_submit_duplicate", "redelivery", ev.redelivery)
	case out.Question != "":
		c.answer(ctx, log, ev, out.Question)
	default:
		log.Debug("line_submitted", "run_id", out.RunID, "agent", out.Agent)
	}
}

func (c *Channel) handlePostback(ctx context.Context, ev event, data string) {
	lineUserID, _ := sourceIDs(ev.source)
	log := c.log.With("workspace_id", c.workspaceID, "webhook_event_id", ev.id, "line_user_id", lineUserID)
	approvalID, approve, ok := parseDecision(data)
	if !ok {
		log.Info("line_postback_ignored", "data", data)
		return
	}
	log = log.With("approval_id", approvalID)
	req, ok := c.requester(ctx, log, ev, lineUserID)
	if !ok {
		return
	}
	a, err := c.tasks.Decide(ctx, task.Decision{WorkspaceID: c.workspaceID, ApprovalID: approvalID, Approve: approve, Approver: req})
	c.answer(ctx, log, ev, decisionReply(log, req.Role, approve, a, err))
}

// parseDecision reads the data of an approval button (PostbackData).
func parseDecision(data string) (approvalID string, approve, ok bool) {
	q, err := url.ParseQuery(data)
	if err != nil || len(q) != 2 || len(q[postbackApproval]) != 1 || len(q[postbackDecision]) != 1 {
		return "", false, false
	}
	approvalID = q.Get(postbackApproval)
	if approvalID == "" {
		return "", false, false
	}
	switch q.Get(postbackDecision) {
	case decisionApprove:
		return approvalID, true, true
	case decisionReject:
		return approvalID, false, true
	}
	return "", false, false
}

// decisionReply is what the approver reads after pressing a button.
func decisionReply(log *slog.Logger, role identity.Role, approve bool, a store.Approval, err error) string {
	switch {
	case errors.Is(err, task.ErrNotAllowed):
		return "You cannot decide this approval: your role (" + string(role) + ") may not approve this kind of action. Ask an admin of the workspace."
	case errors.Is(err, task.ErrSelfApproval):
		return "You asked for this task, so someone else has to approve it."
	case errors.Is(err, task.ErrExpired):
		return "This approval has expired. Send the request again if it is still needed."
	case errors.Is(err, store.ErrNotFound):
		return "This approval no longer exists."
	case errors.Is(err, store.ErrConflict) && a.ID != "":
		// Decided otherwise before: say how it stands.
	case err != nil:
		log.Error("line_decide_failed", "error", err)
		return decideFailedReply
	}
	want := store.ApprovalRejected
	if approve {
		want = store.ApprovalApproved
	}
	switch {
	case a.Status == want && approve:
		return "Approved: " + a.Summary
	case a.Status == want:
		return "Rejected: " + a.Summary
	case a.Status == store.ApprovalExpired:
		return "This approval has expired: " + a.Summary
	case a.Status == store.ApprovalPending:
		return "Your decision is noted; the approval still waits: " + a.Summary
	}
	return "This approval was already " + string(a.Status) + ": " + a.Summary
}

// answer replies to the event with text, when it came with a reply token.
// A failure is logged: the webhook's answer to LINE does not depend on it.
func (c *Channel) answer(ctx context.Context, log *slog.Logger, ev event, text string) {
	if ev.replyToken == "" {
		return
	}
	parts := splitText(text, MaxTextLength, MaxMessages)
	if len(parts) == 0 {
		return
	}
	if err := c.reply(ctx, ev.replyToken, textMessages(parts)); err != nil {
		log.Warn("line_reply_failed", "error", err)
	}
}
