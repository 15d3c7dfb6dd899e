package store

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Worker is one process that executes workflow runs (`agentcraft worker`,
// or `serve` when it executes), as its last heartbeat described it: the
// registry `agentcraft workers` and GET /api/workers read.
type Worker struct {
	// ID is the executor's name in run leases (AGENTCRAFT_WORKER_ID, else
	// the host name): one live process per ID.
	ID string `json:"id"`
	// Kind is the command: "worker" or "serve".
	Kind    string `json:"kind"`
	Host    string `json:"host"`
	PID     int    `json:"pid"`
	Version string `json:"version"`
	// StartedAt is when the process started; SeenAt its last heartbeat.
	StartedAt time.Time `json:"started_at"`
	SeenAt    time.Time `json:"seen_at"`
	// Runs are the runs executing in the process at its last heartbeat.
	Runs []HeldRun `json:"runs"`
}

// HeldRun is a run a worker was executing at its heartbeat.
type HeldRun struct {
	WorkspaceID string `json:"workspace_id"`
	RunID       string `json:"run_id"`
	// Node is the execution key of the node it was executing ("" between
	// nodes).
	Node string `json:"node,omitempty"`
}

// Validate reports whether w can be written.
func (w Worker) Validate() error {
	switch {
	case strings.TrimSpace(w.ID) == "":
		return fmt.Errorf("%w: worker id is empty; set Worker.ID (the lease owner's name)", ErrInvalid)
	case w.Kind == "":
		return fmt.Errorf("%w: worker %s has no kind; set Worker.Kind to worker or serve", ErrInvalid, w.ID)
	case w.PID <= 0:
		return fmt.Errorf("%w: worker %s pid is %d; set Worker.PID to the process id", ErrInvalid, w.ID, w.PID)
	case w.StartedAt.IsZero():
		return fmt.Errorf("%w: worker %s has no start time; set Worker.StartedAt", ErrInvalid, w.ID)
	}
	for _, r := range w.Runs {
		if r.RunID == "" || r.WorkspaceID == "" {
			return fmt.Errorf("%w: worker %s holds a run without id or workspace; set HeldRun.RunID and WorkspaceID", ErrInvalid, w.ID)
		}
	}
	return nil
}

// Workers is the registry of executing processes, each heartbeating its
// row. It is not workspace-scoped: workers serve every workspace.
type Workers interface {
	// Beat records w as alive now (SeenAt is stamped; StartedAt is kept
	// as given), replacing the row of the same ID, and returns the row as
	// stored.
	Beat(ctx context.Context, w Worker) (Worker, error)
	// Get returns the worker with id, or ErrNotFound.
	Get(ctx context.Context, id string) (Worker, error)
	// List returns every registered worker by ID, gone ones included
	// (their SeenAt tells).
	List(ctx context.Context) ([]Worker, error)
	// Leave removes the row of id when it is still the process's (same
	// host and pid), as a worker does when it exits; another process that
	// took the ID over keeps its row.
	Leave(ctx context.Context, id, host string, pid int) error
	// Prune removes the workers last seen before before and returns how
	// many it removed.
	Prune(ctx context.Context, before time.Time) (int, error)
}
