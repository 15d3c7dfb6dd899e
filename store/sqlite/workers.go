package sqlite

import (
	"context"
	"encoding/json"
	"time"

	"github.com/agentcraftlab/agentcraft/store"
)

const workerColumns = `id, kind, host, pid, version, started_at, seen_at, runs`

func scanWorker(sc scanner) (store.Worker, error) {
	var (
		w             store.Worker
		started, seen int64
		runs          string
	)
	if err := sc.Scan(&w.ID, &w.Kind, &w.Host, &w.PID, &w.Version, &started, &seen, &runs); err != nil {
		return store.Worker{}, err
	}
	w.StartedAt, w.SeenAt = fromMicros(started), fromMicros(seen)
	if err := json.Unmarshal([]byte(runs), &w.Runs); err != nil {
		return store.Worker{}, err
	}
	return w, nil
}

func (d driver) WorkerUpsert(ctx context.Context, p *store.WorkerUpsertParams) error {
	w := p.Worker
	runs, err := json.Marshal(w.Runs)
	if err != nil {
		return err
	}
	_, err = d.s.writer.ExecContext(ctx,
		`INSERT INTO workers (`+workerColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, host = excluded.host, pid = excluded.pid,
			version = excluded.version, started_at = excluded.started_at, seen_at = excluded.seen_at, runs = excluded.runs`,
		w.ID, w.Kind, w.Host, w.PID, w.Version, micros(w.StartedAt), micros(w.SeenAt), string(runs))
	return mapErr(err)
}

func (d driver) WorkerGet(ctx context.Context, id string) (store.Worker, error) {
	w, err := scanWorker(d.s.reader.QueryRowContext(ctx, `SELECT `+workerColumns+` FROM workers WHERE id = ?`, id))
	return w, mapErr(err)
}

func (d driver) WorkerList(ctx context.Context) ([]store.Worker, error) {
	return queryList(ctx, d.s.reader, scanWorker, `SELECT `+workerColumns+` FROM workers ORDER BY id`)
}

func (d driver) WorkerDelete(ctx context.Context, p *store.WorkerDeleteParams) error {
	_, err := d.s.writer.ExecContext(ctx, `DELETE FROM workers WHERE id = ? AND host = ? AND pid = ?`, p.ID, p.Host, p.PID)
	return mapErr(err)
}

func (d driver) WorkerPrune(ctx context.Context, before time.Time) (int64, error) {
	res, err := d.s.writer.ExecContext(ctx, `DELETE FROM workers WHERE seen_at < ?`, micros(before))
	if err != nil {
		return 0, mapErr(err)
	}
	return res.RowsAffected()
}
