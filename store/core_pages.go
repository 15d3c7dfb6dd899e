package store

import "context"

// CheckpointPage implements RunPages; the cursor is the last row's id.
func (r runs) CheckpointPage(ctx context.Context, workspaceID, runID string, cursor int64, limit int) ([]Checkpoint, int64, error) {
	switch {
	case limit <= 0:
		limit = DefaultCheckpointPage
	case limit > MaxCheckpointPage:
		limit = MaxCheckpointPage
	}
	rows, err := r.c.d.RunCheckpointPage(ctx, &RunCheckpointPageParams{WorkspaceID: workspaceID, RunID: runID, After: cursor, Limit: limit + 1})
	if err == nil && len(rows) == 0 {
		err = r.runExists(ctx, workspaceID, runID)
	}
	if err != nil {
		return nil, 0, r.c.errorf("page checkpoints of run %s: %w", runID, err)
	}
	var next int64
	if len(rows) > limit {
		rows = rows[:limit]
		next = rows[limit-1].RowID
	}
	out := make([]Checkpoint, len(rows))
	for i, x := range rows {
		out[i] = x.Checkpoint
	}
	return out, next, nil
}

// StoredBytes implements RunPages.
func (r runs) StoredBytes(ctx context.Context, workspaceID string) (int64, error) {
	n, err := r.c.d.RunStoredBytes(ctx, workspaceID)
	if err != nil {
		return 0, r.c.errorf("stored run bytes of workspace %s: %w", workspaceID, err)
	}
	return n, nil
}

// Claim implements IngestLeases.
func (r ingestJobs) Claim(ctx context.Context, workspaceID, id, owner string) (IngestJob, error) {
	if owner == "" {
		return IngestJob{}, r.c.errorf("claim ingest job %s: %w: owner is empty", id, ErrInvalid)
	}
	j, err := r.c.d.IngestJobClaim(ctx, &IngestJobClaimParams{WorkspaceID: workspaceID, ID: id, Owner: owner, Now: now()})
	if isNotFound(err) {
		cur, gerr := r.c.d.IngestJobGet(ctx, workspaceID, id)
		if gerr != nil {
			return IngestJob{}, r.c.errorf("claim ingest job %s: %w", id, ErrNotFound)
		}
		return cur, r.c.errorf("claim ingest job %s: %w: job is already %s", id, ErrConflict, cur.Status)
	}
	if err != nil {
		return IngestJob{}, r.c.errorf("claim ingest job %s: %w", id, err)
	}
	return j, nil
}

// Live implements IngestLeases.
func (r ingestJobs) Live(ctx context.Context) ([]IngestLive, error) {
	out, err := r.c.d.IngestJobLive(ctx)
	if err != nil {
		return nil, r.c.errorf("live ingest jobs: %w", err)
	}
	return out, nil
}
