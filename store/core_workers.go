package store

import (
	"context"
	"time"
)

// Workers implements Store.
func (c Core) Workers() Workers { return workers{c} }

// workers is Workers on a Driver.
type workers struct{ c Core }

func (r workers) Beat(ctx context.Context, w Worker) (Worker, error) {
	if err := w.Validate(); err != nil {
		return Worker{}, r.c.errorf("beat worker: %w", err)
	}
	w.StartedAt = Timestamp(w.StartedAt)
	w.SeenAt = now()
	w.Runs = append([]HeldRun{}, w.Runs...)
	if err := r.c.d.WorkerUpsert(ctx, &WorkerUpsertParams{Worker: w}); err != nil {
		return Worker{}, r.c.errorf("beat worker %s: %w", w.ID, err)
	}
	return w, nil
}

func (r workers) Get(ctx context.Context, id string) (Worker, error) {
	w, err := r.c.d.WorkerGet(ctx, id)
	if err != nil {
		return Worker{}, r.c.errorf("get worker %s: %w", id, err)
	}
	return w, nil
}

func (r workers) List(ctx context.Context) ([]Worker, error) {
	out, err := r.c.d.WorkerList(ctx)
	if err != nil {
		return nil, r.c.errorf("list workers: %w", err)
	}
	return out, nil
}

func (r workers) Leave(ctx context.Context, id, host string, pid int) error {
	if err := r.c.d.WorkerDelete(ctx, &WorkerDeleteParams{ID: id, Host: host, PID: pid}); err != nil {
		return r.c.errorf("leave worker %s: %w", id, err)
	}
	return nil
}

func (r workers) Prune(ctx context.Context, before time.Time) (int, error) {
	n, err := r.c.d.WorkerPrune(ctx, Timestamp(before))
	if err != nil {
		return 0, r.c.errorf("prune workers: %w", err)
	}
	return int(n), nil
}
