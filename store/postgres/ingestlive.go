package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/store"
)

// Claim implements store.IngestLeases.
func (r ingestJobs) Claim(ctx context.Context, workspaceID, id, owner string) (store.IngestJob, error) {
	if owner == "" {
		return store.IngestJob{}, fmt.Errorf("postgres: claim ingest job %s: %w: owner is empty", id, store.ErrInvalid)
	}
	j, err := scanIngestJob(r.s.pool.QueryRow(ctx, `UPDATE ingest_jobs
		SET status = 'running', owner = $1, updated_at = $2
		WHERE workspace_id = $3 AND id = $4 AND status IN ('queued', 'running')
		RETURNING `+ingestColumns, owner, now(), workspaceID, id))
	if errors.Is(err, pgx.ErrNoRows) {
		cur, gerr := r.Get(ctx, workspaceID, id)
		if gerr != nil {
			return store.IngestJob{}, fmt.Errorf("postgres: claim ingest job %s: %w", id, store.ErrNotFound)
		}
		return cur, fmt.Errorf("postgres: claim ingest job %s: %w: job is already %s", id, store.ErrConflict, cur.Status)
	}
	if err != nil {
		return store.IngestJob{}, fmt.Errorf("postgres: claim ingest job %s: %w", id, mapErr(err))
	}
	return j, nil
}

// Live implements store.IngestLeases.
func (r ingestJobs) Live(ctx context.Context) ([]store.IngestLive, error) {
	out, err := queryList(ctx, r.s, func(row pgx.Row) (store.IngestLive, error) {
		var l store.IngestLive
		if err := row.Scan(&l.WorkspaceID, &l.ID, &l.Status, &l.Owner, &l.UpdatedAt); err != nil {
			return store.IngestLive{}, err
		}
		l.UpdatedAt = l.UpdatedAt.UTC()
		return l, nil
	}, `SELECT workspace_id, id, status, owner, updated_at FROM ingest_jobs
		WHERE status IN ('queued', 'running') ORDER BY created_at, id COLLATE "C"`)
	if err != nil {
		return nil, fmt.Errorf("postgres: live ingest jobs: %w", err)
	}
	return out, nil
}
