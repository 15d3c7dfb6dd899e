package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/store"
)

const workerColumns = `id, kind, host, pid, version, started_at, seen_at, runs`

func scanWorker(row pgx.Row) (store.Worker, error) {
	var w store.Worker
	if err := row.Scan(&w.ID, &w.Kind, &w.Host, &w.PID, &w.Version, &w.StartedAt, &w.SeenAt, &w.Runs); err != nil {
		return store.Worker{}, err
	}
	w.StartedAt, w.SeenAt = w.StartedAt.UTC(), w.SeenAt.UTC()
	if w.Runs == nil {
		w.Runs = []store.HeldRun{}
	}
	return w, nil
}

func (d driver) WorkerUpsert(ctx context.Context, p *store.WorkerUpsertParams) error {
	w := p.Worker
	_, err := d.s.pool.Exec(ctx,
		`INSERT INTO workers (`+workerColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, host = excluded.host, pid = excluded.pid,
			version = excluded.version, started_at = excluded.started_at, seen_at = excluded.seen_at, runs = excluded.runs`,
		w.ID, w.Kind, w.Host, w.PID, w.Version, w.StartedAt, w.SeenAt, w.Runs)
	return mapErr(err)
}

func (d driver) WorkerGet(ctx context.Context, id string) (store.Worker, error) {
	w, err := scanWorker(d.s.pool.QueryRow(ctx, `SELECT `+workerColumns+` FROM workers WHERE id = $1`, id))
	return w, mapErr(err)
}

func (d driver) WorkerList(ctx context.Context) ([]store.Worker, error) {
	return queryList(ctx, d.s, scanWorker, `SELECT `+workerColumns+` FROM workers ORDER BY id COLLATE "C"`)
}

func (d driver) WorkerDelete(ctx context.Context, p *store.WorkerDeleteParams) error {
	_, err := d.s.pool.Exec(ctx, `DELETE FROM workers WHERE id = $1 AND host = $2 AND pid = $3`, p.ID, p.Host, p.PID)
	return mapErr(err)
}

func (d driver) WorkerPrune(ctx context.Context, before time.Time) (int64, error) {
	tag, err := d.s.pool.Exec(ctx, `DELETE FROM workers WHERE seen_at < $1`, before)
	if err != nil {
		return 0, mapErr(err)
	}
	return tag.RowsAffected(), nil
}
