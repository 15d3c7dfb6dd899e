package sqlite

import (
	"context"

	"github.com/agentcraftlab/agentcraft/store"
)

func (d driver) RunCheckpointPage(ctx context.Context, p *store.RunCheckpointPageParams) ([]store.CheckpointAt, error) {
	return queryList(ctx, d.s.reader, func(sc scanner) (store.CheckpointAt, error) {
		var (
			x       store.CheckpointAt
			created int64
		)
		if err := sc.Scan(&x.RowID, &x.RunID, &x.Key, &x.NodeID, (*[]byte)(&x.Output), &x.Handle, &created); err != nil {
			return store.CheckpointAt{}, err
		}
		x.CreatedAt = fromMicros(created)
		return x, nil
	}, `SELECT c.id, c.run_id, c.key, c.node_id, c.output, c.handle, c.created_at
		FROM run_checkpoints c JOIN runs r ON r.id = c.run_id
		WHERE r.workspace_id = ? AND c.run_id = ? AND c.id > ? ORDER BY c.id LIMIT ?`,
		p.WorkspaceID, p.RunID, p.After, p.Limit)
}

func (d driver) RunStoredBytes(ctx context.Context, workspaceID string) (int64, error) {
	var n int64
	err := d.s.reader.QueryRowContext(ctx, `SELECT
		coalesce((SELECT sum(octet_length(c.output)) FROM run_checkpoints c JOIN runs r ON r.id = c.run_id WHERE r.workspace_id = ?1), 0) +
		coalesce((SELECT sum(octet_length(e.data)) FROM run_events e JOIN runs r ON r.id = e.run_id WHERE r.workspace_id = ?1), 0)`,
		workspaceID).Scan(&n)
	return n, mapErr(err)
}
