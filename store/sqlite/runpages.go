package sqlite

import (
	"context"
	"fmt"

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
	rows, err := queryList(ctx, r.s.reader, func(sc scanner) (row, error) {
		var (
			x       row
			created int64
		)
		if err := sc.Scan(&x.id, &x.cp.RunID, &x.cp.Key, &x.cp.NodeID, (*[]byte)(&x.cp.Output), &x.cp.Handle, &created); err != nil {
			return row{}, err
		}
		x.cp.CreatedAt = fromMicros(created)
		return x, nil
	}, `SELECT c.id, c.run_id, c.key, c.node_id, c.output, c.handle, c.created_at
		FROM run_checkpoints c JOIN runs r ON r.id = c.run_id
		WHERE r.workspace_id = ? AND c.run_id = ? AND c.id > ? ORDER BY c.id LIMIT ?`,
		workspaceID, runID, cursor, limit+1)
	if err == nil && len(rows) == 0 {
		err = runExists(ctx, r.s.reader, workspaceID, runID)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("sqlite: page checkpoints of run %s: %w", runID, err)
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

// StoredBytes implements store.RunPages.
func (r runs) StoredBytes(ctx context.Context, workspaceID string) (int64, error) {
	var n int64
	err := r.s.reader.QueryRowContext(ctx, `SELECT
		coalesce((SELECT sum(octet_length(c.output)) FROM run_checkpoints c JOIN runs r ON r.id = c.run_id WHERE r.workspace_id = ?1), 0) +
		coalesce((SELECT sum(octet_length(e.data)) FROM run_events e JOIN runs r ON r.id = e.run_id WHERE r.workspace_id = ?1), 0)`,
		workspaceID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("sqlite: stored run bytes of workspace %s: %w", workspaceID, mapErr(err))
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
