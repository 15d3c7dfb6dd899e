package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/store"
)

func (d driver) RunCheckpointPage(ctx context.Context, p *store.RunCheckpointPageParams) ([]store.CheckpointAt, error) {
	return queryList(ctx, d.s, func(pr pgx.Row) (store.CheckpointAt, error) {
		var x store.CheckpointAt
		if err := pr.Scan(&x.RowID, &x.RunID, &x.Key, &x.NodeID, (*[]byte)(&x.Output), &x.Handle, &x.CreatedAt); err != nil {
			return store.CheckpointAt{}, err
		}
		x.CreatedAt = x.CreatedAt.UTC()
		return x, nil
	}, `SELECT c.id, c.run_id, c.key, c.node_id, c.output, c.handle, c.created_at
		FROM run_checkpoints c JOIN runs r ON r.id = c.run_id
		WHERE r.workspace_id = $1 AND c.run_id = $2 AND c.id > $3 ORDER BY c.id LIMIT $4`,
		p.WorkspaceID, p.RunID, p.After, p.Limit)
}

// RunStoredBytes counts the sizes as stored (pg_column_size, after
// compression), read without detoasting.
func (d driver) RunStoredBytes(ctx context.Context, workspaceID string) (int64, error) {
	var n int64
	err := d.s.pool.QueryRow(ctx, `SELECT
		coalesce((SELECT sum(pg_column_size(c.output)) FROM run_checkpoints c JOIN runs r ON r.id = c.run_id WHERE r.workspace_id = $1), 0)::bigint +
		coalesce((SELECT sum(pg_column_size(e.data)) FROM run_events e JOIN runs r ON r.id = e.run_id WHERE r.workspace_id = $1), 0)::bigint`,
		workspaceID).Scan(&n)
	return n, mapErr(err)
}
