package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// StepStatus is where a task step is in its life.
type StepStatus string

// Step statuses. Pending is the only live one: the step is recorded and
// its side effect may or may not have happened.
const (
	StepPending     StepStatus = "pending"
	StepOK          StepStatus = "ok"
	StepError       StepStatus = "error"
	StepSkipped     StepStatus = "skipped"
	StepCompensated StepStatus = "compensated"
)

// Valid reports whether s is one of the step statuses.
func (s StepStatus) Valid() bool {
	switch s {
	case StepPending, StepOK, StepError, StepSkipped, StepCompensated:
		return true
	}
	return false
}

// TaskStep is one entry of a task's evidence ledger: an action an
// executor took (or is about to take), recorded before its side effect and
// finished after it, never rewritten.
type TaskStep struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspace_id"`
	TaskID      string `json:"task_id"`
	// RunID is the run (a Run's id) that took the step, if any.
	RunID string `json:"run_id,omitempty"`
	// Seq numbers the task's steps from 1, assigned by the store.
	Seq int64 `json:"seq"`
	// IdempotencyKey identifies the side effect; unique per workspace.
	IdempotencyKey string          `json:"idempotency_key"`
	Tool           string          `json:"tool,omitempty"`
	Capability     Capability      `json:"capability"`
	Input          json.RawMessage `json:"input,omitempty"`
	// Output is the evidence of what happened, written once.
	Output json.RawMessage `json:"output,omitempty"`
	// Undo is what a compensation needs to reverse the step (the id of
	// the event to delete, say); nil when it cannot be undone.
	Undo       json.RawMessage `json:"undo,omitempty"`
	Status     StepStatus      `json:"status"`
	Error      string          `json:"error,omitempty"`
	CreatedAt  time.Time       `json:"created_at"`
	FinishedAt *time.Time      `json:"finished_at,omitempty"`
}

// Validate reports whether s can be recorded.
func (s TaskStep) Validate() error {
	switch {
	case s.WorkspaceID == "":
		return fmt.Errorf("%w: step workspace id is empty; set TaskStep.WorkspaceID", ErrInvalid)
	case s.TaskID == "":
		return fmt.Errorf("%w: step task id is empty; set TaskStep.TaskID", ErrInvalid)
	case s.IdempotencyKey == "":
		return fmt.Errorf("%w: step idempotency key is empty; set TaskStep.IdempotencyKey to a key naming the side effect", ErrInvalid)
	case s.Capability != "" && !s.Capability.Valid():
		return fmt.Errorf("%w: step capability %q is unknown; use low, medium or high", ErrInvalid, s.Capability)
	case s.Status != "" && !s.Status.Valid():
		return fmt.Errorf("%w: step status %q is unknown; leave it empty for pending", ErrInvalid, s.Status)
	case len(s.Input) > 0 && !json.Valid(s.Input):
		return fmt.Errorf("%w: step input is not valid JSON", ErrInvalid)
	case len(s.Output) > 0 && !json.Valid(s.Output):
		return fmt.Errorf("%w: step output is not valid JSON", ErrInvalid)
	case len(s.Undo) > 0 && !json.Valid(s.Undo):
		return fmt.Errorf("%w: step undo is not valid JSON", ErrInvalid)
	case s.Status == "" || s.Status == StepPending:
		if len(s.Output) > 0 || s.Error != "" {
			return fmt.Errorf("%w: a pending step has no output or error yet; Finish writes them", ErrInvalid)
		}
	}
	return nil
}

// StepResult is what Steps.Finish writes on a pending step.
type StepResult struct {
	// Status is ok, error or skipped.
	Status StepStatus
	Output json.RawMessage
	Error  string
	// Undo, when set, becomes the step's undo payload if it has none
	// yet: an effect often learns its undo (the id of what it created)
	// only once done. A payload recorded already is kept.
	Undo json.RawMessage
}

// Validate reports whether r can be written.
func (r StepResult) Validate() error {
	switch {
	case r.Status != StepOK && r.Status != StepError && r.Status != StepSkipped:
		return fmt.Errorf("%w: step result status %q; finish a step ok, error or skipped", ErrInvalid, r.Status)
	case len(r.Output) > 0 && !json.Valid(r.Output):
		return fmt.Errorf("%w: step output is not valid JSON", ErrInvalid)
	case len(r.Undo) > 0 && !json.Valid(r.Undo):
		return fmt.Errorf("%w: step undo is not valid JSON", ErrInvalid)
	}
	return nil
}

// Steps stores the evidence ledger of tasks.
type Steps interface {
	// Record inserts s before its side effect (ID assigned when empty,
	// Seq the task's next, Status pending when empty, Capability low when
	// empty, CreatedAt stamped; FinishedAt stamped when recorded in a
	// final status, as a skipped step is) and returns it as stored. An
	// IdempotencyKey the workspace holds already gives ErrConflict with
	// the stored step, so a resumed executor learns whether the effect was
	// done (ok) or may have begun (pending); of concurrent records with
	// one key exactly one inserts. An unknown task or run gives
	// ErrNotFound.
	Record(ctx context.Context, s TaskStep) (TaskStep, error)
	// Finish writes r on the pending step, stamps FinishedAt and returns
	// the stored row. A step finished already gives ErrConflict with the
	// step as stored: evidence is written once, never overwritten.
	Finish(ctx context.Context, workspaceID, id string, r StepResult) (TaskStep, error)
	// Compensate marks an ok step compensated once its undo has run (the
	// undo itself recorded as a step of its own); its output and undo
	// stay as they were. A step in another status gives ErrConflict with
	// the step as stored.
	Compensate(ctx context.Context, workspaceID, id string) (TaskStep, error)
	// Get returns the workspace's step, or ErrNotFound.
	Get(ctx context.Context, workspaceID, id string) (TaskStep, error)
	// GetByKey finds the step by its idempotency key, or ErrNotFound.
	GetByKey(ctx context.Context, workspaceID, key string) (TaskStep, error)
	// List returns the task's steps in seq order; an unknown task gives
	// ErrNotFound.
	List(ctx context.Context, workspaceID, taskID string) ([]TaskStep, error)
}
