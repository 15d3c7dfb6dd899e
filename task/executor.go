package task

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/workflow"
)

// The worker API: an external executor (a Claude Code–style agent
// runtime, a script) takes a task's run instead of the workflow engine.
// A request with Request.Executor set makes a run the engine leaves
// alone; the executor claims it with a lease (Claim), renews the lease
// (Heartbeat), records each step before and after its side effect
// (RecordStep: the same ledger, idempotency keys and approval gate as
// the engine's tool nodes) and reports the end (Complete, Fail).

// ExecutorInput is the input of an external run: what to do.
type ExecutorInput struct {
	Intent Intent `json:"intent"`
	Plan   Plan   `json:"plan"`
}

// Claimed is a run an executor holds.
type Claimed struct {
	Run  store.Run     `json:"run"`
	Task store.Task    `json:"task"`
	Work ExecutorInput `json:"work"`
}

// ErrNoWork: nothing is waiting for the executor.
var ErrNoWork = errors.New("task: no run is waiting for this executor")

// ErrLeaseLost: the executor no longer holds the run's lease (it expired
// and another claim took it, or the run ended).
var ErrLeaseLost = errors.New("task: the run is not leased to this executor")

// ApprovalPendingError refuses a step until its approval is decided.
type ApprovalPendingError struct {
	ApprovalID string
	Status     string
}

func (e *ApprovalPendingError) Error() string {
	return fmt.Sprintf("task: step needs approval %s, which is %s; record it again once approved", e.ApprovalID, e.Status)
}

func (e *ApprovalPendingError) Unwrap() error { return ErrNeedsApproval }

func executorOwner(executor string) string { return "executor:" + executor }

// Claim leases to executor the run runID (or, with runID empty, the
// oldest run waiting for it, or one whose lease expired) for lease.
// Claiming a run it holds already renews the lease.
func (s *Service) Claim(ctx context.Context, workspaceID, executor, runID string, lease time.Duration) (Claimed, error) {
	if executor == "" {
		return Claimed{}, fmt.Errorf("%w: executor is empty; name the executor", ErrInvalid)
	}
	if lease <= 0 || lease > time.Hour {
		return Claimed{}, fmt.Errorf("%w: lease %v is not between 1s and 1h", ErrInvalid, lease)
	}
	var candidates []store.Run
	if runID != "" {
		r, err := s.st.Runs().Get(ctx, workspaceID, runID)
		if err != nil {
			return Claimed{}, err
		}
		if r.Executor != executor {
			return Claimed{}, fmt.Errorf("run %s: %w", runID, store.ErrNotFound)
		}
		candidates = []store.Run{r}
	} else {
		for _, st := range []store.RunStatus{store.RunQueued, store.RunRunning} {
			rs, err := s.st.Runs().List(ctx, workspaceID, store.RunFilter{Status: st, Executor: executor, Limit: 100})
			if err != nil {
				return Claimed{}, err
			}
			for _, r := range slices.Backward(rs) { // oldest first
				if st == store.RunQueued || r.LeaseUntil != nil && r.LeaseUntil.Before(s.now()) {
					candidates = append(candidates, r)
				}
			}
		}
	}
	for _, r := range candidates {
		got, err := s.st.Runs().Claim(ctx, workspaceID, r.ID, executorOwner(executor), lease, false)
		if errors.Is(err, store.ErrConflict) {
			if runID != "" {
				return Claimed{}, fmt.Errorf("%w: %v", ErrLeaseLost, err)
			}
			continue // another claim won it
		}
		if err != nil {
			return Claimed{}, err
		}
		t, err := s.st.Tasks().Get(ctx, workspaceID, got.TaskID)
		if err != nil {
			return Claimed{}, err
		}
		var in struct {
			Input ExecutorInput `json:"input"`
		}
		_ = json.Unmarshal(got.Input, &in)
		if runID == "" || r.LeaseOwner != executorOwner(executor) {
			payload, _ := json.Marshal(map[string]any{"run_id": got.ID, "executor": executor})
			_, _ = s.st.Tasks().AppendEvent(ctx, workspaceID, t.ID, store.TaskEvent{Type: store.TaskEventClaimed, Actor: "executor:" + executor, Payload: payload})
		}
		return Claimed{Run: got, Task: t, Work: in.Input}, nil
	}
	return Claimed{}, ErrNoWork
}

// held returns the run when executor holds its lease.
func (s *Service) held(ctx context.Context, workspaceID, runID, executor string) (store.Run, error) {
	r, err := s.st.Runs().Get(ctx, workspaceID, runID)
	if err != nil {
		return store.Run{}, err
	}
	if r.Executor != executor {
		return store.Run{}, fmt.Errorf("run %s: %w", runID, store.ErrNotFound)
	}
	if r.Status != store.RunRunning || r.LeaseOwner != executorOwner(executor) || r.LeaseUntil == nil || r.LeaseUntil.Before(s.now()) {
		return r, fmt.Errorf("%w: run %s is %s, leased by %q", ErrLeaseLost, runID, r.Status, r.LeaseOwner)
	}
	return r, nil
}

// Heartbeat renews the executor's lease of the run.
func (s *Service) Heartbeat(ctx context.Context, workspaceID, runID, executor string, lease time.Duration) (store.Run, error) {
	if _, err := s.held(ctx, workspaceID, runID, executor); err != nil {
		return store.Run{}, err
	}
	c, err := s.Claim(ctx, workspaceID, executor, runID, lease)
	return c.Run, err
}

// ExternalStep is a step an executor reports.
type ExternalStep struct {
	// Key names the step within the run ("create_event", "step_2"): with
	// the run it is the step's idempotency key.
	Key        string          `json:"key"`
	Tool       string          `json:"tool"`
	Capability string          `json:"capability"`
	Summary    string          `json:"summary"`
	Input      json.RawMessage `json:"input,omitempty"`
	// Output, Error and Undo, when set, finish the step (after its side
	// effect); without them the step is recorded pending (before it).
	Output json.RawMessage `json:"output,omitempty"`
	Error  string          `json:"error,omitempty"`
	Undo   json.RawMessage `json:"undo,omitempty"`
}

// RecordStep records a step of the executor's run in the evidence
// ledger. Before the effect (no output yet) it records the step pending
// — or returns the step recorded already under that key, so a resumed
// executor learns it was done (ok) and does not do it again — and a step
// of medium or high capability is refused with *ApprovalPendingError
// until a person approves it (the approval is asked for, and the card
// sent, on the first refusal). After the effect (output or error) it
// finishes the step; evidence is written once.
func (s *Service) RecordStep(ctx context.Context, workspaceID, runID, executor string, st ExternalStep) (store.TaskStep, error) {
	r, err := s.held(ctx, workspaceID, runID, executor)
	if err != nil {
		return store.TaskStep{}, err
	}
	c := store.Capability(st.Capability)
	if st.Capability == "" {
		c = store.CapabilityLow
	}
	switch {
	case st.Key == "" || !plainKey(st.Key):
		return store.TaskStep{}, fmt.Errorf("%w: key %q is not a step name of letters, digits, _ and -", ErrInvalid, st.Key)
	case st.Tool == "":
		return store.TaskStep{}, fmt.Errorf("%w: tool is empty; name what the step does", ErrInvalid)
	case !c.Valid():
		return store.TaskStep{}, fmt.Errorf("%w: capability %q is not low, medium or high", ErrInvalid, st.Capability)
	}
	t, err := s.st.Tasks().Get(ctx, workspaceID, r.TaskID)
	if err != nil {
		return store.TaskStep{}, err
	}
	key := StepKey(runID, st.Key)
	done := len(st.Output) > 0 || st.Error != ""
	if c == store.CapabilityHigh || c == store.CapabilityMedium && !s.policy.of(ctx, workspaceID).Trusts(executor) {
		if err := s.ledger.granted(ctx, t, key, c); err != nil {
			summary := st.Summary
			if summary == "" {
				summary = st.Tool + " (" + string(c) + ")"
			}
			a, aerr := s.ledger.Approval(ctx, workflow.ApprovalRequest{WorkspaceID: workspaceID, RunID: runID, StepKey: st.Key,
				Summary: summary, Capability: string(c)})
			if aerr != nil {
				return store.TaskStep{}, aerr
			}
			return store.TaskStep{}, &ApprovalPendingError{ApprovalID: a.ID, Status: a.Status}
		}
		if _, err := s.st.Tasks().Transition(ctx, workspaceID, t.ID, []store.TaskStatus{store.TaskAwaitingApproval}, store.TaskRunning, store.TaskUpdate{}); err != nil && !errors.Is(err, store.ErrConflict) {
			return store.TaskStep{}, err
		}
	}
	step, err := s.st.Steps().Record(ctx, store.TaskStep{WorkspaceID: workspaceID, TaskID: t.ID, RunID: runID,
		IdempotencyKey: key, Tool: st.Tool, Capability: c, Input: st.Input})
	if err != nil && !errors.Is(err, store.ErrConflict) {
		return store.TaskStep{}, err
	}
	if !done || step.Status != store.StepPending {
		return step, nil // recorded before the effect, or already finished
	}
	res := store.StepResult{Status: store.StepOK, Output: st.Output, Undo: st.Undo}
	if st.Error != "" {
		res = store.StepResult{Status: store.StepError, Error: st.Error, Output: st.Output}
	}
	s.ledger.finish(ctx, t, step, res)
	return s.st.Steps().Get(ctx, workspaceID, step.ID)
}

// Complete ends the executor's run with its result; the task is done and
// the asker answered.
func (s *Service) Complete(ctx context.Context, workspaceID, runID, executor string, result json.RawMessage) (store.Run, error) {
	if _, err := s.held(ctx, workspaceID, runID, executor); err != nil {
		return store.Run{}, err
	}
	if len(result) == 0 {
		result = json.RawMessage(`null`)
	}
	if !json.Valid(result) {
		return store.Run{}, fmt.Errorf("%w: result is not JSON", ErrInvalid)
	}
	r, err := s.st.Runs().Transition(ctx, workspaceID, runID, []store.RunStatus{store.RunRunning}, store.RunSucceeded, store.RunUpdate{Output: result})
	if err != nil {
		return r, err
	}
	s.Changed(ctx, r)
	return r, nil
}

// Fail reports the executor's run failed: retryable puts it back in the
// queue for a claim (the lease released; steps done stay done), else
// the run and its task fail.
func (s *Service) Fail(ctx context.Context, workspaceID, runID, executor, msg string, retryable bool) (store.Run, error) {
	if _, err := s.held(ctx, workspaceID, runID, executor); err != nil {
		return store.Run{}, err
	}
	if msg == "" {
		msg = "the executor reported a failure"
	}
	to := store.RunFailed
	if retryable {
		to = store.RunQueued
	}
	r, err := s.st.Runs().Transition(ctx, workspaceID, runID, []store.RunStatus{store.RunRunning}, to, store.RunUpdate{Error: &msg})
	if err != nil {
		return r, err
	}
	s.Changed(ctx, r)
	return r, nil
}
