package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/store"
)

func (d driver) IngestJobClaim(ctx context.Context, p *store.IngestJobClaimParams) (store.IngestJob, error) {
	j, err := scanIngestJob(d.s.pool.QueryRow(ctx, `UPDATE ingest_jobs
		SET status = 'running', owner = $1, updated_at = $2
		WHERE workspace_id = $3 AND id = $4 AND status IN ('queued', 'running')
		RETURNING `+ingestColumns, p.Owner, p.Now, p.WorkspaceID, p.ID))
	if errors.Is(err, pgx.ErrNoRows) {
		return store.IngestJob{}, store.ErrNotFound
	}
	return j, mapErr(err)
}

func (d driver) IngestJobLive(ctx context.Context) ([]store.IngestLive, error) {
	return queryList(ctx, d.s, func(row pgx.Row) (store.IngestLive, error) {
		var l store.IngestLive
		if err := row.Scan(&l.WorkspaceID, &l.ID, &l.Status, &l.Owner, &l.UpdatedAt); err != nil {
			return store.IngestLive{}, err
		}
		l.UpdatedAt = l.UpdatedAt.UTC()
		return l, nil
	}, `SELECT workspace_id, id, status, owner, updated_at FROM ingest_jobs
		WHERE status IN ('queued', 'running') ORDER BY created_at, id COLLATE "C"`)
}
