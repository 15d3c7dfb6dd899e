package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/agentcraftlab/agentcraft/controlplane"
	"github.com/agentcraftlab/agentcraft/store"
)

// The workers registry: every process that executes runs heartbeats its
// row (store.Workers) with the runs it holds; `agentcraft workers` and
// GET /api/workers read it.
// pruneAfter is how long a gone worker stays listed before any live
// process removes its row.
const pruneAfter = 10 * time.Minute

// registration is this process's row in the workers registry.
type registration struct {
	st     store.Workers
	self   store.Worker
	active func() []store.HeldRun
	logger *slog.Logger

	stop context.CancelFunc
	wg   sync.WaitGroup // the heartbeat goroutine
}

// register records this process (kind "worker" or "serve") as the executor
// owner and heartbeats it until leave. It refuses to start when a live
// process elsewhere already executes under owner: two processes with one
// name in run leases would both hold, and both execute, the same runs.
func register(ctx context.Context, st store.Workers, kind, owner string, active func() []store.HeldRun, logger *slog.Logger) (*registration, error) {
	host, _ := os.Hostname()
	r := &registration{st: st, active: active, logger: logger,
		self: store.Worker{ID: owner, Kind: kind, Host: host, PID: os.Getpid(), Version: version(), StartedAt: time.Now()}}
	prev, err := st.Get(ctx, owner)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return nil, fmt.Errorf("workers registry: %w", err)
	case prev.PID == r.self.PID && prev.Host == host:
	case time.Since(prev.SeenAt) < controlplane.WorkerGoneAfter && (prev.Host != host || processAlive(prev.PID)):
		return nil, fmt.Errorf("worker id %q is in use by %s pid %d on %s (last seen %s ago): "+
			"give each process its own AGENTCRAFT_WORKER_ID, or stop the other one first",
			owner, prev.Kind, prev.PID, prev.Host, time.Since(prev.SeenAt).Round(time.Second))
	}
	if err := r.beat(ctx); err != nil {
		return nil, fmt.Errorf("workers registry: %w", err)
	}
	bctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	r.stop = stop
	r.wg.Go(func() { r.loop(bctx) })
	return r, nil
}

func (r *registration) beat(ctx context.Context) error {
	w := r.self
	w.Runs = r.active()
	_, err := r.st.Beat(ctx, w)
	return err
}

func (r *registration) loop(ctx context.Context) {
	t := time.NewTicker(controlplane.WorkerBeatEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := r.beat(ctx); err != nil && ctx.Err() == nil {
			r.logger.Warn("worker_heartbeat_failed", "err", err)
		}
		if n, err := r.st.Prune(ctx, time.Now().Add(-pruneAfter)); err == nil && n > 0 {
			r.logger.Info("workers_pruned", "count", n)
		}
	}
}

// leave stops the heartbeat and removes the row: the process has no runs
// left. It is idempotent.
func (r *registration) leave() {
	if r == nil || r.stop == nil {
		return
	}
	r.stop()
	r.wg.Wait()
	r.stop = nil
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.st.Leave(ctx, r.self.ID, r.self.Host, r.self.PID); err != nil {
		r.logger.Warn("worker_leave_failed", "err", err)
	}
}
