package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/agentcraftlab/agentcraft/store"
)

// Claim implements store.IngestLeases.
func (r ingestJobs) Claim(ctx context.Context, workspaceID, id, owner string) (store.IngestJob, error) {
	if owner == "" {
		return store.IngestJob{}, fmt.Errorf("sqlite: claim ingest job %s: %w: owner is empty", id, store.ErrInvalid)
	}
	j, err := scanIngestJob(r.s.writer.QueryRowContext(ctx, `UPDATE ingest_jobs
		SET status = 'running', owner = ?, updated_at = ?
		WHERE workspace_id = ? AND id = ? AND status IN ('queued', 'running')
		RETURNING `+ingestColumns, owner, micros(now()), workspaceID, id))
	if errors.Is(err, sql.ErrNoRows) {
		cur, gerr := r.Get(ctx, workspaceID, id)
		if gerr != nil {
			return store.IngestJob{}, fmt.Errorf("sqlite: claim ingest job %s: %w", id, store.ErrNotFound)
		}
		return cur, fmt.Errorf("sqlite: claim ingest job %s: %w: job is already %s", id, store.ErrConflict, cur.Status)
	}
	if err != nil {
		return store.IngestJob{}, fmt.Errorf("sqlite: claim ingest job %s: %w", id, mapErr(err))
	}
	return j, nil
}

// Live implements store.IngestLeases.
func (r ingestJobs) Live(ctx context.Context) ([]store.IngestLive, error) {
	out, err := queryList(ctx, r.s.reader, func(sc scanner) (store.IngestLive, error) {
		var (
			l       store.IngestLive
			updated int64
		)
		if err := sc.Scan(&l.WorkspaceID, &l.ID, &l.Status, &l.Owner, &updated); err != nil {
			return store.IngestLive{}, err
		}
		l.UpdatedAt = fromMicros(updated)
		return l, nil
	}, `SELECT workspace_id, id, status, owner, updated_at FROM ingest_jobs
		WHERE status IN ('queued', 'running') ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: live ingest jobs: %w", err)
	}
	return out, nil
}
