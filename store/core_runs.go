package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// runs is Runs on a Driver: the run state machine, written once.
type runs struct{ c Core }

// cloneJSON copies m, keeping empty as nil: what a read returns.
func cloneJSON(m json.RawMessage) json.RawMessage {
	if len(m) == 0 {
		return nil
	}
	return append(json.RawMessage(nil), m...)
}

func (r runs) Create(ctx context.Context, run Run) (Run, error) {
	if err := run.Validate(); err != nil {
		return Run{}, r.c.errorf("create run: %w", err)
	}
	if run.ID == "" {
		run.ID = NewID()
	}
	if run.Status == "" {
		run.Status = RunQueued
	}
	run.Definition = append(json.RawMessage(nil), run.Definition...)
	run.Input, run.Output = cloneJSON(run.Input), cloneJSON(run.Output)
	run.LeaseOwner, run.LeaseUntil = "", nil
	t := now()
	run.CreatedAt, run.UpdatedAt, run.FinishedAt = t, t, nil
	if run.Status.Final() {
		run.FinishedAt = &t
	}
	got, err := r.c.d.RunInsert(ctx, &RunInsertParams{Run: run})
	if err != nil {
		return Run{}, r.c.errorf("create run: %w", err)
	}
	return got, nil
}

func (r runs) Get(ctx context.Context, workspaceID, id string) (Run, error) {
	run, err := r.c.d.RunGet(ctx, workspaceID, id)
	if err != nil {
		return Run{}, r.c.errorf("get run %s: %w", id, err)
	}
	return run, nil
}

func (r runs) List(ctx context.Context, workspaceID string, f RunFilter) ([]Run, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	out, err := r.c.d.RunList(ctx, &RunListParams{WorkspaceID: workspaceID, Status: f.Status, WorkflowID: f.WorkflowID, TaskID: f.TaskID, Executor: f.Executor, TriggerID: f.TriggerID, Limit: limit})
	if err != nil {
		return nil, r.c.errorf("list runs: %w", err)
	}
	return out, nil
}

func (r runs) Live(ctx context.Context) ([]Run, error) {
	out, err := r.c.d.RunListLive(ctx)
	if err != nil {
		return nil, r.c.errorf("list live runs: %w", err)
	}
	return out, nil
}

func (r runs) Claim(ctx context.Context, workspaceID, id, owner string, ttl time.Duration, force bool) (Run, error) {
	switch {
	case owner == "":
		return Run{}, r.c.errorf("claim run %s: %w: owner is empty; name the executor", id, ErrInvalid)
	case ttl <= 0:
		return Run{}, r.c.errorf("claim run %s: %w: ttl is %v; set a positive lease duration", id, ErrInvalid, ttl)
	}
	t := now()
	run, err := r.c.d.RunClaim(ctx, &RunClaimParams{WorkspaceID: workspaceID, ID: id, Owner: owner, Now: t, Until: t.Add(ttl), Force: force})
	if isNotFound(err) {
		return r.refuse(ctx, "claim", workspaceID, id)
	}
	if err != nil {
		return Run{}, r.c.errorf("claim run %s: %w", id, err)
	}
	return run, nil
}

// refuse explains a conditional update that matched no row: the run is
// unknown (ErrNotFound) or in a state that refuses op (ErrConflict, with
// the run as stored).
func (r runs) refuse(ctx context.Context, op, workspaceID, id string) (Run, error) {
	run, err := r.c.d.RunGet(ctx, workspaceID, id)
	if err != nil {
		return Run{}, r.c.errorf("%s run %s: %w", op, id, ErrNotFound)
	}
	return run, r.c.errorf("%s run %s: %w: run is %s, leased by %q until %v",
		op, id, ErrConflict, run.Status, run.LeaseOwner, run.LeaseUntil)
}

func (r runs) Transition(ctx context.Context, workspaceID, id string, from []RunStatus, to RunStatus, u RunUpdate) (Run, error) {
	if err := checkTransition("run", from, to, u); err != nil {
		return Run{}, r.c.errorf("transition run %s: %w", id, err)
	}
	t := now()
	p := &RunTransitionParams{WorkspaceID: workspaceID, ID: id, From: from, To: to, Update: u, Now: t,
		Release: to != RunRunning} // a queued, waiting or finished run has no executor
	if to.Final() {
		p.Finished = &t
	}
	run, err := r.c.d.RunTransition(ctx, p)
	if isNotFound(err) {
		return r.refuse(ctx, "transition", workspaceID, id)
	}
	if err != nil {
		return Run{}, r.c.errorf("transition run %s: %w", id, err)
	}
	return run, nil
}

func (r runs) Release(ctx context.Context, workspaceID, id, owner string) (Run, error) {
	if owner == "" {
		return Run{}, r.c.errorf("release run %s: %w: owner is empty; name the executor that holds the lease", id, ErrInvalid)
	}
	run, err := r.c.d.RunTransition(ctx, &RunTransitionParams{WorkspaceID: workspaceID, ID: id,
		From: []RunStatus{RunRunning}, To: RunQueued, Now: now(), Release: true, LeaseOwner: owner})
	if isNotFound(err) {
		return r.refuse(ctx, "release", workspaceID, id)
	}
	if err != nil {
		return Run{}, r.c.errorf("release run %s: %w", id, err)
	}
	return run, nil
}

// checkTransition validates the arguments of Runs.Transition and
// Tasks.Transition; noun names what moves ("run", "task").
func checkTransition[S interface {
	~string
	Valid() bool
}](noun string, from []S, to S, u interface{ Validate() error }) error {
	if len(from) == 0 {
		return fmt.Errorf("%w: no from status; list the statuses the %s may leave", ErrInvalid, noun)
	}
	for _, s := range from {
		if !s.Valid() {
			return fmt.Errorf("%w: from status %q is unknown", ErrInvalid, s)
		}
	}
	if !to.Valid() {
		return fmt.Errorf("%w: to status %q is unknown", ErrInvalid, to)
	}
	return u.Validate()
}

// checkEvents validates events and gives an empty RunID the value runID
// (when runID is set), in place.
func checkEvents(runID string, events []RunEvent) error {
	for i := range events {
		e := &events[i]
		if runID != "" {
			if e.RunID == "" {
				e.RunID = runID
			} else if e.RunID != runID {
				return fmt.Errorf("%w: event %d belongs to run %s, not to the checkpoint's run %s", ErrInvalid, e.Seq, e.RunID, runID)
			}
		}
		if err := e.Validate(); err != nil {
			return err
		}
	}
	return nil
}

func (r runs) Checkpoint(ctx context.Context, workspaceID string, cp Checkpoint, events []RunEvent) error {
	if err := cp.Validate(); err != nil {
		return r.c.errorf("save checkpoint: %w", err)
	}
	events = append([]RunEvent(nil), events...) // checkEvents fills RunID
	if err := checkEvents(cp.RunID, events); err != nil {
		return r.c.errorf("save checkpoint %q: %w", cp.Key, err)
	}
	err := r.c.d.RunCheckpointInsert(ctx, &RunCheckpointInsertParams{WorkspaceID: workspaceID, Checkpoint: cp, Events: events, Now: now()})
	if isNotFound(err) {
		// The missing parent of a checkpoint is its run, whatever the
		// driver's error says.
		err = fmt.Errorf("%w: run does not exist in the workspace", ErrNotFound)
	}
	if err != nil {
		return r.c.errorf("save checkpoint %q of run %s: %w", cp.Key, cp.RunID, err)
	}
	return nil
}

func (r runs) AppendEvents(ctx context.Context, workspaceID string, events []RunEvent) error {
	if len(events) == 0 {
		return nil
	}
	if err := checkEvents("", events); err != nil {
		return r.c.errorf("append run events: %w", err)
	}
	if err := r.c.d.RunEventInsert(ctx, &RunEventInsertParams{WorkspaceID: workspaceID, Events: events, Now: now()}); err != nil {
		return r.c.errorf("append run events: %w", err)
	}
	return nil
}

// runExists returns ErrNotFound unless the workspace holds the run.
func (r runs) runExists(ctx context.Context, workspaceID, id string) error {
	ok, err := r.c.d.RunExists(ctx, workspaceID, id)
	if err == nil && !ok {
		err = fmt.Errorf("%w: run %s does not exist in the workspace", ErrNotFound, id)
	}
	return err
}

func (r runs) Checkpoints(ctx context.Context, workspaceID, runID string) ([]Checkpoint, error) {
	out, err := r.c.d.RunCheckpointList(ctx, workspaceID, runID)
	if err == nil && len(out) == 0 {
		err = r.runExists(ctx, workspaceID, runID)
	}
	if err != nil {
		return nil, r.c.errorf("list checkpoints of run %s: %w", runID, err)
	}
	return out, nil
}

func (r runs) Events(ctx context.Context, workspaceID, runID string, after int64, limit int) ([]RunEvent, error) {
	if limit <= 0 {
		limit = 1000
	}
	out, err := r.c.d.RunEventList(ctx, &RunEventListParams{WorkspaceID: workspaceID, RunID: runID, After: after, Limit: limit})
	if err == nil && len(out) == 0 {
		err = r.runExists(ctx, workspaceID, runID)
	}
	if err != nil {
		return nil, r.c.errorf("list events of run %s: %w", runID, err)
	}
	return out, nil
}
