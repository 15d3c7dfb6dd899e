package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/store"
)

// CheckpointPage implements store.RunPages; the cursor is the last row's
// id (checkpoints are ordered by it).
func (r runs) CheckpointPage(ctx context.Context, workspaceID, runID string, cursor int64, limit int) ([]store.Checkpoint, int64, error) {
	limit = pageLimit(limit)
	type row struct {
		id int64
		cp store.Checkpoint
	}
	rows, err := queryList(ctx, r.s, func(pr pgx.Row) (row, error) {
		var x row
		if err := pr.Scan(&x.id, &x.cp.RunID, &x.cp.Key, &x.cp.NodeID, (*[]byte)(&x.cp.Output), &x.cp.Handle, &x.cp.CreatedAt); err != nil {
			return row{}, err
		}
		x.cp.CreatedAt = x.cp.CreatedAt.UTC()
		return x, nil
	}, `SELECT c.id, c.run_id, c.key, c.node_id, c.output, c.handle, c.created_at
		FROM run_checkpoints c JOIN runs r ON r.id = c.run_id
		WHERE r.workspace_id = $1 AND c.run_id = $2 AND c.id > $3 ORDER BY c.id LIMIT $4`,
		workspaceID, runID, cursor, limit+1)
	if err == nil && len(rows) == 0 {
		err = r.runExists(ctx, workspaceID, runID)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("postgres: page checkpoints of run %s: %w", runID, err)
	}
	var next int64
	if len(rows) > limit {
		rows = rows[:limit]
		next = rows[limit-1].id
	}
	out := make([]store.Checkpoint, len(rows))
	for i, x := range rows {
		out[i] = x.cp
	}
	return out, next, nil
}

// StoredBytes implements store.RunPages: the sizes as stored
// (pg_column_size, after compression), read without detoasting.
func (r runs) StoredBytes(ctx context.Context, workspaceID string) (int64, error) {
	var n int64
	err := r.s.pool.QueryRow(ctx, `SELECT
		coalesce((SELECT sum(pg_column_size(c.output)) FROM run_checkpoints c JOIN runs r ON r.id = c.run_id WHERE r.workspace_id = $1), 0)::bigint +
		coalesce((SELECT sum(pg_column_size(e.data)) FROM run_events e JOIN runs r ON r.id = e.run_id WHERE r.workspace_id = $1), 0)::bigint`,
		workspaceID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("postgres: stored run bytes of workspace %s: %w", workspaceID, mapErr(err))
	}
	return n, nil
}

func pageLimit(limit int) int {
	switch {
	case limit <= 0:
		return store.DefaultCheckpointPage
	case limit > store.MaxCheckpointPage:
		return store.MaxCheckpointPage
	}
	return limit
}
