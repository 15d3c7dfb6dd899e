package sqlite

import (
	"context"

	"github.com/agentcraftlab/agentcraft/store"
)

func (d driver) ToolSettingUpsert(ctx context.Context, p *store.ToolSettingUpsertParams) error {
	ts := p.Setting
	_, err := d.s.writer.ExecContext(ctx,
		`INSERT INTO tool_settings (workspace_id, tool, enabled, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (workspace_id, tool) DO UPDATE SET enabled = excluded.enabled, updated_at = excluded.updated_at`,
		ts.WorkspaceID, ts.Tool, ts.Enabled, micros(ts.UpdatedAt))
	return mapErr(err)
}

func (d driver) ToolSettingList(ctx context.Context, workspaceID string) ([]store.ToolSetting, error) {
	return queryList(ctx, d.s.reader, func(sc scanner) (store.ToolSetting, error) {
		var (
			ts      store.ToolSetting
			updated int64
		)
		if err := sc.Scan(&ts.WorkspaceID, &ts.Tool, &ts.Enabled, &updated); err != nil {
			return store.ToolSetting{}, err
		}
		ts.UpdatedAt = fromMicros(updated)
		return ts, nil
	}, `SELECT workspace_id, tool, enabled, updated_at FROM tool_settings WHERE workspace_id = ? ORDER BY tool`, workspaceID)
}
