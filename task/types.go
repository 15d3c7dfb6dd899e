package task

import (
	"context"
	"errors"
	"time"

	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/store"
)

// Requester is who asks for a task or decides an approval.
type Requester struct {
	// UserID is the signed-in (or channel-linked) user; empty for an API
	// key or a system actor.
	UserID string
	// Role is the requester's role in the workspace.
	Role identity.Role
	// Actor names the requester in events and audit: "user:<id>",
	// "apikey:<id>", "line:<LINE user id>", "system:…".
	Actor string
}

// Address is where the answers about a task go on a channel.
type Address struct {
	// Channel names the channel ("line"); empty when the asker polls the
	// API instead.
	Channel string `json:"channel,omitempty"`
	// Target is the channel's address: a LINE user, group or room id.
	Target string `json:"target,omitempty"`
	// ReplyToken is a one-use token for answering the message that asked
	// (LINE's replyToken), valid for a short while after ReceivedAt.
	ReplyToken string    `json:"reply_token,omitempty"`
	ReceivedAt time.Time `json:"received_at,omitzero"`
}

// Request is something a person asked: plain text, or a structured intent.
type Request struct {
	WorkspaceID string
	// Text is the request in plain language; required unless Intent is set.
	Text string
	// Intent, when set, is used as given instead of extracting one.
	Intent *Intent
	// Source names the channel: "line", "web", "api".
	Source string
	// SourceRef is the channel's id of the message (LINE's
	// webhookEventId): a second request with the same one returns the
	// first task, marked Duplicate.
	SourceRef string
	Requester Requester
	// ReplyTo is where results, questions and approval cards are sent.
	ReplyTo Address
	// Agent, when set, names the agent to plan it instead of the
	// router's choice (POST /api/agents/run).
	Agent string
	// Ceiling, when set (low, medium, high), refuses a plan that needs a
	// higher capability: the task fails naming the step.
	Ceiling string
	// Executor, when set, hands the plan to that external executor (the
	// worker API: Service.Claim) instead of the workflow engine.
	Executor string
	// Plan, when set, is the plan, as given: no agent is routed to (a
	// tool call the gate held is a plan of that one call).
	Plan *Plan
}

// Outcome is what Submit did with a request.
type Outcome struct {
	Task store.Task `json:"task"`
	// Duplicate is set when the request was a redelivery of one already
	// made (same source and source ref): nothing new was done.
	Duplicate bool `json:"duplicate,omitempty"`
	// Question is set when the request was ambiguous: the task is
	// cancelled as needs_clarification and this is what to ask.
	Question string `json:"question,omitempty"`
	// Agent is the agent the router chose.
	Agent string `json:"agent,omitempty"`
	// RunID is the run executing the plan, when one started.
	RunID string `json:"run_id,omitempty"`
}

// Decision is a person's answer to an approval.
type Decision struct {
	WorkspaceID string
	// TaskID, when set, is the task the approval must belong to: another
	// task's approval is store.ErrNotFound.
	TaskID     string
	ApprovalID string
	Approve    bool
	Approver   Requester
	// Comment is kept in the task's event.
	Comment string
}

// Errors of Decide.
var (
	// ErrNotAllowed: the approver's role may not approve this capability.
	ErrNotAllowed = errors.New("task: not allowed to decide this approval")
	// ErrSelfApproval: a high-capability task's requester may not approve
	// it (unless the workspace's policy allows it).
	ErrSelfApproval = errors.New("task: the requester of a high-capability task cannot approve it")
	// ErrExpired: the approval expired before the decision.
	ErrExpired = errors.New("task: the approval has expired")
)

// Message is the payload of a notification of the task service: what a
// channel's sender shows.
type Message struct {
	// Text is the message in plain language.
	Text string `json:"text"`
	// ReplyToken, when set, answers the asking message (see Address).
	ReplyToken string    `json:"reply_token,omitempty"`
	ReceivedAt time.Time `json:"received_at,omitzero"`
	// Approval, on a notification of kind "approval", is the card to
	// decide.
	Approval *ApprovalCard `json:"approval,omitempty"`
}

// ApprovalCard is what an approver sees.
type ApprovalCard struct {
	ID         string     `json:"id"`
	TaskID     string     `json:"task_id"`
	TaskTitle  string     `json:"task_title"`
	Summary    string     `json:"summary"`
	Capability string     `json:"capability"`
	ExpiresAt  *time.Time `json:"expires_at,omitempty"`
}

// Notification kinds.
const (
	KindResult        = "result"
	KindQuestion      = "question"
	KindApproval      = "approval"
	KindError         = "error"
	KindReminder      = "reminder"
	KindDecisionNoted = "decision"
)

// ErrPermanent marks a Sender's error that retrying cannot mend (the
// channel refused the message as invalid, the target blocked the bot):
// wrap it, fmt.Errorf("%w: …", task.ErrPermanent), and the notification
// is failed at once instead of retried.
var ErrPermanent = errors.New("task: permanent delivery failure")

// Sender delivers the notifications of one channel. An error leaves the
// notification pending for another try, or failed with the error's text
// when it wraps ErrPermanent or the tries are used up.
type Sender interface {
	Send(ctx context.Context, n store.Notification, m Message) error
}
