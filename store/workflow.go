package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Workflow is a named workflow definition of a workspace. Every save makes a
// new version; Version is the newest, and Definition is that version's JSON.
type Workflow struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspace_id"`
	// Name is unique within the workspace.
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Version counts saves from 1.
	Version int `json:"version"`
	// Definition is the workflow.Definition as JSON (validated by the
	// caller; the store only checks that it is JSON).
	Definition json.RawMessage `json:"definition"`
	CreatedAt  time.Time       `json:"created_at"`
	UpdatedAt  time.Time       `json:"updated_at"`
}

// WorkflowVersion is one saved revision of a workflow.
type WorkflowVersion struct {
	WorkflowID string          `json:"workflow_id"`
	Version    int             `json:"version"`
	Definition json.RawMessage `json:"definition"`
	CreatedAt  time.Time       `json:"created_at"`
}

// Validate reports whether w can be written.
func (w Workflow) Validate() error {
	switch {
	case w.WorkspaceID == "":
		return fmt.Errorf("%w: workflow workspace id is empty; set Workflow.WorkspaceID", ErrInvalid)
	case w.Name == "":
		return fmt.Errorf("%w: workflow name is empty; set Workflow.Name", ErrInvalid)
	case !json.Valid(w.Definition):
		return fmt.Errorf("%w: workflow %q definition is not valid JSON", ErrInvalid, w.Name)
	}
	return nil
}

// Workflows stores workflow definitions and their versions.
type Workflows interface {
	// Create inserts w as version 1 and returns it as stored (ID assigned
	// when empty, Version 1, timestamps stamped). A taken name gives
	// ErrConflict; an unknown workspace ErrNotFound.
	Create(ctx context.Context, w Workflow) (Workflow, error)
	// Get returns the workspace's workflow with its newest version.
	Get(ctx context.Context, workspaceID, id string) (Workflow, error)
	// GetByName is Get by name.
	GetByName(ctx context.Context, workspaceID, name string) (Workflow, error)
	// List returns the workspace's workflows ordered by name.
	List(ctx context.Context, workspaceID string) ([]Workflow, error)
	// Save stores w.Definition (and w.Name, w.Description) as a new version
	// of the workflow w.ID in w.WorkspaceID and returns the row with the
	// incremented Version. Unknown id: ErrNotFound; renaming onto a taken
	// name: ErrConflict. Versions are never rewritten.
	Save(ctx context.Context, w Workflow) (Workflow, error)
	// Versions lists the workflow's versions, newest first.
	Versions(ctx context.Context, workspaceID, id string) ([]WorkflowVersion, error)
	// Version returns one version, or ErrNotFound.
	Version(ctx context.Context, workspaceID, id string, version int) (WorkflowVersion, error)
	// Delete removes the workflow and its versions (runs keep their pinned
	// definition and stay readable).
	Delete(ctx context.Context, workspaceID, id string) error
}

// RunStatus is where a run is in its life.
type RunStatus string

// Run statuses. Queued, Running and Waiting are live; the others are final.
const (
	RunQueued    RunStatus = "queued"    // waiting for a worker
	RunRunning   RunStatus = "running"   // a worker holds its lease
	RunWaiting   RunStatus = "waiting"   // parked on a human node; no goroutine held
	RunSucceeded RunStatus = "succeeded" // reached the end
	RunFailed    RunStatus = "failed"    // a node failed or the run timed out
	// RunFailedContract: a contract or output_check node refused the data;
	// nothing downstream ran.
	RunFailedContract RunStatus = "failed_contract"
	RunCanceled       RunStatus = "canceled" // canceled through the API
	RunBlocked        RunStatus = "blocked"  // an input hook's block_pattern refused the input
)

// Final reports whether s is a final status.
func (s RunStatus) Final() bool {
	switch s {
	case RunSucceeded, RunFailed, RunFailedContract, RunCanceled, RunBlocked:
		return true
	}
	return false
}

// Valid reports whether s is one of the run statuses.
func (s RunStatus) Valid() bool {
	switch s {
	case RunQueued, RunRunning, RunWaiting:
		return true
	}
	return s.Final()
}

// Run is one execution of a workflow version. It pins the definition it
// runs, so editing the workflow never changes a run in flight.
type Run struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspace_id"`
	// WorkflowID is empty for a run of a definition not stored as a
	// workflow (agentcraft run FILE against a server).
	WorkflowID      string `json:"workflow_id,omitempty"`
	WorkflowVersion int    `json:"workflow_version,omitempty"`
	// TaskID is the task whose plan the run executes, if any (package
	// task); the run's steps and approvals belong to that task.
	TaskID string `json:"task_id,omitempty"`
	// TriggerID is the trigger (package trigger) whose schedule tick or
	// webhook delivery started the run, if any.
	TriggerID string `json:"trigger_id,omitempty"`
	// Executor, when set, names the external executor (a worker-API
	// client) that runs the run; the workflow engine leaves such runs
	// alone, and only that executor claims them.
	Executor   string          `json:"executor,omitempty"`
	Definition json.RawMessage `json:"definition"`
	Status     RunStatus       `json:"status"`
	Input      json.RawMessage `json:"input"`
	// Output is the final output (JSON), set when the run finishes.
	Output json.RawMessage `json:"output,omitempty"`
	// Error says why a run failed, was blocked or canceled.
	Error string `json:"error,omitempty"`
	// WaitingNode is the id of the human node a waiting run is parked on.
	WaitingNode string `json:"waiting_node,omitempty"`
	// LeaseOwner and LeaseUntil say which executor runs it; see Runs.Claim.
	LeaseOwner string     `json:"lease_owner,omitempty"`
	LeaseUntil *time.Time `json:"lease_until,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	UpdatedAt  time.Time  `json:"updated_at"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	// TraceParent and TraceState are the W3C trace context (traceparent,
	// tracestate) of the request that started the run, set only while
	// tracing is on: the process that executes the run continues that
	// trace (package controlplane). Empty: no trace to continue. Not part
	// of the API's JSON.
	TraceParent string `json:"-"`
	TraceState  string `json:"-"`
}

// Checkpoint is the saved result of one node execution. Key identifies the
// execution within the run (the node id, plus the loop visit or iteration
// item when there is one, such as "draft#2" or "each[3]/fetch"); a key is
// written once and never replaced, which is what makes a resumed run skip
// work already done.
type Checkpoint struct {
	RunID  string `json:"run_id"`
	Key    string `json:"key"`
	NodeID string `json:"node_id"`
	// Output is the node's output as JSON.
	Output json.RawMessage `json:"output"`
	// Handle is the sourceHandle a branching node chose ("" otherwise).
	Handle    string    `json:"handle,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// Validate reports whether r can be created.
func (r Run) Validate() error {
	switch {
	case r.WorkspaceID == "":
		return fmt.Errorf("%w: run workspace id is empty; set Run.WorkspaceID", ErrInvalid)
	case r.Status != "" && !r.Status.Valid():
		return fmt.Errorf("%w: run status %q is unknown; set Run.Status to a RunStatus or leave it empty for queued", ErrInvalid, r.Status)
	case r.WorkflowVersion < 0:
		return fmt.Errorf("%w: run workflow version is %d; set it to 0 (none) or more", ErrInvalid, r.WorkflowVersion)
	case !json.Valid(r.Definition):
		return fmt.Errorf("%w: run definition is not valid JSON; set Run.Definition", ErrInvalid)
	case len(r.Input) > 0 && !json.Valid(r.Input):
		return fmt.Errorf("%w: run input is not valid JSON", ErrInvalid)
	case len(r.Output) > 0 && !json.Valid(r.Output):
		return fmt.Errorf("%w: run output is not valid JSON", ErrInvalid)
	}
	return nil
}

// Validate reports whether cp can be saved.
func (cp Checkpoint) Validate() error {
	switch {
	case cp.RunID == "":
		return fmt.Errorf("%w: checkpoint run id is empty; set Checkpoint.RunID", ErrInvalid)
	case cp.Key == "":
		return fmt.Errorf("%w: checkpoint of run %s has no key; set Checkpoint.Key", ErrInvalid, cp.RunID)
	case cp.NodeID == "":
		return fmt.Errorf("%w: checkpoint %q has no node id; set Checkpoint.NodeID", ErrInvalid, cp.Key)
	case len(cp.Output) > 0 && !json.Valid(cp.Output):
		return fmt.Errorf("%w: checkpoint %q output is not valid JSON", ErrInvalid, cp.Key)
	}
	return nil
}

// RunEvent is one persisted event of a run's stream. Seq is assigned by the
// engine, increasing from 1 within the run; it is the SSE event id.
type RunEvent struct {
	RunID     string          `json:"run_id"`
	Seq       int64           `json:"seq"`
	Type      string          `json:"type"`
	Data      json.RawMessage `json:"data"`
	CreatedAt time.Time       `json:"created_at"`
}

// Validate reports whether e can be stored.
func (e RunEvent) Validate() error {
	switch {
	case e.RunID == "":
		return fmt.Errorf("%w: run event run id is empty; set RunEvent.RunID", ErrInvalid)
	case e.Seq < 1:
		return fmt.Errorf("%w: run event seq is %d; number events from 1", ErrInvalid, e.Seq)
	case e.Type == "":
		return fmt.Errorf("%w: run event %d has no type; set RunEvent.Type", ErrInvalid, e.Seq)
	case len(e.Data) > 0 && !json.Valid(e.Data):
		return fmt.Errorf("%w: run event %d data is not valid JSON", ErrInvalid, e.Seq)
	}
	return nil
}

// RunFilter narrows Runs.List. Zero fields do not filter.
type RunFilter struct {
	Status     RunStatus
	WorkflowID string
	TaskID     string
	Executor   string
	TriggerID  string
	// Limit caps the rows (newest first); 0 means 100.
	Limit int
}

// Runs stores workflow runs, their checkpoints and their events.
type Runs interface {
	// Create inserts r (ID assigned when empty; Status defaults to queued)
	// and returns it as stored. The lease fields are ignored (a lease is
	// taken with Claim); a run created in a final status, such as one an
	// input hook blocked, gets FinishedAt. An unknown workspace gives
	// ErrNotFound.
	Create(ctx context.Context, r Run) (Run, error)
	// Get returns the workspace's run, or ErrNotFound.
	Get(ctx context.Context, workspaceID, id string) (Run, error)
	// List returns the workspace's runs, newest first.
	List(ctx context.Context, workspaceID string, f RunFilter) ([]Run, error)
	// Live returns every queued or running run of every workspace, oldest
	// first: what a restarting single-process server resumes at once.
	Live(ctx context.Context) ([]Run, error)

	// Claim gives the lease of a queued or running run to owner until
	// now+ttl and sets it running. It succeeds when the run has no lease,
	// the lease has expired, owner already holds it (a heartbeat), or force
	// is set (a restarting single process taking back its own runs).
	// Otherwise, or when the run is not queued or running, it returns
	// ErrConflict together with the run as stored. ttl must be positive.
	Claim(ctx context.Context, workspaceID, id, owner string, ttl time.Duration, force bool) (Run, error)
	// Transition moves the run to status `to` when its status is one of
	// `from`, applying the fields of u, and returns the stored row; a run
	// in another status gives ErrConflict with the run as stored. A final
	// `to` stamps FinishedAt; a live one clears it. Any `to` but running
	// clears the lease: a queued, waiting or finished run has no executor.
	Transition(ctx context.Context, workspaceID, id string, from []RunStatus, to RunStatus, u RunUpdate) (Run, error)
	// Release hands a running run leased to owner back to the queue: it
	// becomes queued with no lease, so any executor may claim it at once
	// instead of waiting for the lease to expire (a worker that stops
	// before the run ends). A run in another status, or leased to another
	// executor, gives ErrConflict with the run as stored.
	Release(ctx context.Context, workspaceID, id, owner string) (Run, error)

	// Checkpoint saves cp and appends events in one transaction. A key
	// already saved for the run gives ErrConflict and writes nothing (the
	// events included), so a node that two executors both ran is recorded
	// once. The events belong to cp's run (an empty RunID is taken as
	// cp.RunID) and are stored as AppendEvents stores them. An unknown run
	// gives ErrNotFound.
	Checkpoint(ctx context.Context, workspaceID string, cp Checkpoint, events []RunEvent) error
	// Checkpoints returns the run's checkpoints in the order they were
	// saved. An unknown run gives ErrNotFound.
	Checkpoints(ctx context.Context, workspaceID, runID string) ([]Checkpoint, error)
	// AppendEvents stores events; an event whose (run, seq) exists is
	// skipped, so re-sending after a crash is harmless. An event of an
	// unknown run gives ErrNotFound and stores nothing.
	AppendEvents(ctx context.Context, workspaceID string, events []RunEvent) error
	// Events returns the run's events with Seq > after, in order, at most
	// limit (0 means 1000). An unknown run gives ErrNotFound.
	Events(ctx context.Context, workspaceID, runID string, after int64, limit int) ([]RunEvent, error)
	RunPages
}

// RunUpdate holds the fields Runs.Transition may change; nil leaves a field
// as it is.
type RunUpdate struct {
	Output      json.RawMessage
	Error       *string
	WaitingNode *string
}

// Validate reports whether u can be applied.
func (u RunUpdate) Validate() error {
	if u.Output != nil && !json.Valid(u.Output) {
		return fmt.Errorf("%w: run output is not valid JSON; set RunUpdate.Output to JSON or nil", ErrInvalid)
	}
	return nil
}
