package store

import (
	"context"
	"fmt"
	"time"
)

// ApprovalStatus is where an approval is in its life.
type ApprovalStatus string

// Approval statuses. Pending is the only live one.
const (
	ApprovalPending  ApprovalStatus = "pending"
	ApprovalApproved ApprovalStatus = "approved"
	ApprovalRejected ApprovalStatus = "rejected"
	ApprovalExpired  ApprovalStatus = "expired"
)

// Valid reports whether s is one of the approval statuses.
func (s ApprovalStatus) Valid() bool {
	switch s {
	case ApprovalPending, ApprovalApproved, ApprovalRejected, ApprovalExpired:
		return true
	}
	return false
}

// Approval is a human's go-ahead asked for an action of a task before it
// happens.
type Approval struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspace_id"`
	TaskID      string `json:"task_id"`
	// RunID is the run (a Run's id) waiting for the decision, if any.
	RunID string `json:"run_id,omitempty"`
	// StepKey names the step of the plan that asks, if any; a task asks
	// once per step key (see Approvals.Create).
	StepKey    string     `json:"step_key,omitempty"`
	Capability Capability `json:"capability"`
	// Summary says, for a human, what will be done.
	Summary        string         `json:"summary"`
	Status         ApprovalStatus `json:"status"`
	RequestedBy    string         `json:"requested_by,omitempty"`
	ApproverUserID string         `json:"approver_user_id,omitempty"`
	DecidedAt      *time.Time     `json:"decided_at,omitempty"`
	// ExpiresAt, when set, is when a pending approval stops being
	// decidable.
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
}

// Validate reports whether a can be created.
func (a Approval) Validate() error {
	switch {
	case a.WorkspaceID == "":
		return fmt.Errorf("%w: approval workspace id is empty; set Approval.WorkspaceID", ErrInvalid)
	case a.TaskID == "":
		return fmt.Errorf("%w: approval task id is empty; set Approval.TaskID", ErrInvalid)
	case !a.Capability.Valid():
		return fmt.Errorf("%w: approval capability %q is unknown; use low, medium or high", ErrInvalid, a.Capability)
	case a.Summary == "":
		return fmt.Errorf("%w: approval summary is empty; say what will be done in Approval.Summary", ErrInvalid)
	case a.Status != "" && a.Status != ApprovalPending:
		return fmt.Errorf("%w: approval status %q; an approval is created pending and decided with Decide", ErrInvalid, a.Status)
	}
	return nil
}

// ApprovalFilter narrows Approvals.List. Zero fields do not filter.
type ApprovalFilter struct {
	Status ApprovalStatus
	TaskID string
	// Limit caps the rows (newest first); 0 means 100.
	Limit int
}

// Approvals stores the approvals of tasks.
type Approvals interface {
	// Create inserts a as pending (ID assigned when empty, CreatedAt
	// stamped, the decision fields cleared) and returns it as stored. A
	// StepKey the task has asked for already gives ErrConflict with the
	// existing approval, so an executor resumed after a crash finds the
	// approval it asked for instead of asking twice. An unknown task or
	// run gives ErrNotFound.
	Create(ctx context.Context, a Approval) (Approval, error)
	// Get returns the workspace's approval, or ErrNotFound.
	Get(ctx context.Context, workspaceID, id string) (Approval, error)
	// List returns the workspace's approvals, newest first.
	List(ctx context.Context, workspaceID string, f ApprovalFilter) ([]Approval, error)
	// Decide approves (approved true) or rejects the pending approval as
	// approver at now, and returns the stored row with decided true: this
	// call made the decision, and its effect is the caller's to apply. In
	// the same transaction the task gets the event {Type approved or
	// rejected, Actor approver, Payload {"approval_id": id}}, so its
	// history holds each decision exactly once.
	// Deciding it again the same way is idempotent: the row as stored,
	// decided false and no error, so a doubled click or a redelivered
	// postback applies nothing twice. Deciding it the other way, or once
	// it has expired (ExpiresAt at or before now; a pending row past it is
	// set expired then), gives ErrConflict with the row as stored. Two
	// concurrent decisions: exactly one gets decided true.
	Decide(ctx context.Context, workspaceID, id string, approved bool, approver string, now time.Time) (a Approval, decided bool, err error)
	// ExpireDue sets expired every pending approval, of every workspace,
	// whose ExpiresAt is at or before now, and returns them.
	ExpireDue(ctx context.Context, now time.Time) ([]Approval, error)
}
