package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/agentcraftlab/agentcraft/store"
)

func (d driver) IngestJobClaim(ctx context.Context, p *store.IngestJobClaimParams) (store.IngestJob, error) {
	j, err := scanIngestJob(d.s.writer.QueryRowContext(ctx, `UPDATE ingest_jobs
		SET status = 'running', owner = ?, updated_at = ?
		WHERE workspace_id = ? AND id = ? AND status IN ('queued', 'running')
		RETURNING `+ingestColumns, p.Owner, micros(p.Now), p.WorkspaceID, p.ID))
	if errors.Is(err, sql.ErrNoRows) {
		return store.IngestJob{}, store.ErrNotFound
	}
	return j, mapErr(err)
}

func (d driver) IngestJobLive(ctx context.Context) ([]store.IngestLive, error) {
	return queryList(ctx, d.s.reader, func(sc scanner) (store.IngestLive, error) {
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
}
