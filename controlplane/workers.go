package controlplane

import (
	"context"
	"time"

	"github.com/agentcraftlab/agentcraft/store"
)

// The workers registry: each process that executes runs heartbeats its
// row (store.Workers) every WorkerBeatEvery with the runs it executes.
const (
	WorkerBeatEvery = 5 * time.Second
	// WorkerGoneAfter is how long after its last heartbeat a worker is
	// taken for gone (three missed beats).
	WorkerGoneAfter = 3 * WorkerBeatEvery
)

// Worker statuses in WorkerStatus.Status.
const (
	WorkerLive = "live"
	WorkerGone = "gone"
	// WorkerUnregistered is a lease owner with no registry row: a process
	// of an older version, or one whose row was pruned.
	WorkerUnregistered = "unregistered"
)

// WorkerStatus is a registered worker with the run leases it holds.
type WorkerStatus struct {
	store.Worker
	// Status is WorkerLive, WorkerGone or WorkerUnregistered.
	Status string `json:"status"`
	// Leases are the running runs leased to the worker, oldest first.
	Leases []Lease `json:"leases"`
}

// Lease is a running run's lease.
type Lease struct {
	WorkspaceID string `json:"workspace_id"`
	RunID       string `json:"run_id"`
	// Node is the node the worker reported executing at its last
	// heartbeat ("" between nodes or when it did not report the run).
	Node  string     `json:"node,omitempty"`
	Until *time.Time `json:"until,omitempty"`
	// Expired: the lease has run out; another worker may take the run
	// (the sweeper wakes it within 15 s).
	Expired bool `json:"expired,omitempty"`
}

// ListWorkers returns the registered workers by id, each with the leases
// it holds, then the lease owners that have no registry row.
func ListWorkers(ctx context.Context, st store.Store) ([]WorkerStatus, error) {
	ws, err := st.Workers().List(ctx)
	if err != nil {
		return nil, err
	}
	live, err := st.Runs().Live(ctx)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	out := make([]WorkerStatus, 0, len(ws))
	at := map[string]int{}
	for _, w := range ws {
		s := WorkerStatus{Worker: w, Status: WorkerLive, Leases: []Lease{}}
		if now.Sub(w.SeenAt) > WorkerGoneAfter {
			s.Status = WorkerGone
		}
		at[w.ID] = len(out)
		out = append(out, s)
	}
	for _, r := range live {
		if r.Status != store.RunRunning || r.LeaseOwner == "" || r.Executor != "" {
			continue
		}
		i, ok := at[r.LeaseOwner]
		if !ok {
			i = len(out)
			at[r.LeaseOwner] = i
			out = append(out, WorkerStatus{Worker: store.Worker{ID: r.LeaseOwner, Runs: []store.HeldRun{}}, Status: WorkerUnregistered, Leases: []Lease{}})
		}
		l := Lease{WorkspaceID: r.WorkspaceID, RunID: r.ID, Until: r.LeaseUntil, Expired: r.LeaseUntil != nil && now.After(*r.LeaseUntil)}
		for _, h := range out[i].Runs {
			if h.RunID == r.ID {
				l.Node = h.Node
			}
		}
		out[i].Leases = append(out[i].Leases, l)
	}
	return out, nil
}

// Workers is ListWorkers on the service's store.
func (s *Service) Workers(ctx context.Context) ([]WorkerStatus, error) {
	return ListWorkers(ctx, s.st)
}
