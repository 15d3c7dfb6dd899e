package workflow

import (
	"context"
	"time"
)

// Actions performs the side effects of tool and approval nodes for the
// task a run executes, keeping the task's evidence ledger. Package task
// implements it; with Services.Actions nil those kinds fail with an error
// saying so.
type Actions interface {
	// Act calls the workspace's tool call.Tool with call.Input once: the
	// step is recorded before the effect under an idempotency key of the
	// run and execution, so a resumed run gets the recorded output back
	// instead of a second effect. A tool of medium or high capability
	// runs only after an approval of call.Key was granted (an approval
	// node naming this node). The output is the tool's result, decoded
	// when it is JSON.
	Act(ctx context.Context, call ToolCall) (any, error)
	// Approval asks a person to approve the step req.StepKey, once per
	// step (a repeat returns the approval asked for), and returns where
	// that approval stands.
	Approval(ctx context.Context, req ApprovalRequest) (ApprovalState, error)
}

// ToolCall is a tool node's call.
type ToolCall struct {
	WorkspaceID string
	RunID       string
	NodeID      string
	// Key identifies the execution within the run (Exec.Key).
	Key   string
	Tool  string
	Input map[string]any
	// Summary says, for the ledger and the approver, what the call does.
	Summary string
}

// ApprovalRequest is an approval node's question.
type ApprovalRequest struct {
	WorkspaceID string
	RunID       string
	NodeID      string
	// StepKey is the execution key of the node the approval gates.
	StepKey    string
	Summary    string
	Capability string // low, medium or high
	// TTL, when positive, bounds how long the approval may be decided;
	// zero takes the workspace's default.
	TTL time.Duration
}

// Approval states as ApprovalState.Status names them.
const (
	ApprovalPending  = "pending"
	ApprovalApproved = "approved"
	ApprovalRejected = "rejected"
	ApprovalExpired  = "expired"
)

// ApprovalState is where an approval stands.
type ApprovalState struct {
	ID     string `json:"approval_id"`
	Status string `json:"status"`
	// Approver is who decided it, once decided.
	Approver  string     `json:"approver,omitempty"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}
