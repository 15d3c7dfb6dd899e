package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/store"
)

func (d driver) ToolSettingUpsert(ctx context.Context, p *store.ToolSettingUpsertParams) error {
	ts := p.Setting
	_, err := d.s.pool.Exec(ctx,
		`INSERT INTO tool_settings (workspace_id, tool, enabled, updated_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (workspace_id, tool) DO UPDATE SET enabled = excluded.enabled, updated_at = excluded.updated_at`,
		ts.WorkspaceID, ts.Tool, ts.Enabled, ts.UpdatedAt)
	return mapErr(err)
}

func (d driver) ToolSettingList(ctx context.Context, workspaceID string) ([]store.ToolSetting, error) {
	return queryList(ctx, d.s, func(row pgx.Row) (store.ToolSetting, error) {
		var ts store.ToolSetting
		if err := row.Scan(&ts.WorkspaceID, &ts.Tool, &ts.Enabled, &ts.UpdatedAt); err != nil {
			return store.ToolSetting{}, err
		}
		ts.UpdatedAt = ts.UpdatedAt.UTC()
		return ts, nil
	}, `SELECT workspace_id, tool, enabled, updated_at FROM tool_settings WHERE workspace_id = $1 ORDER BY tool COLLATE "C"`, workspaceID)
}
