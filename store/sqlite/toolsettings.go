package sqlite

import (
	"context"
	"fmt"

	"github.com/agentcraftlab/agentcraft/store"
)

// ToolSettings implements store.Store.
func (s *Store) ToolSettings() store.ToolSettings { return toolSettings{s} }

type toolSettings struct{ s *Store }

func (r toolSettings) Set(ctx context.Context, ts store.ToolSetting) (store.ToolSetting, error) {
	if err := ts.Validate(); err != nil {
		return store.ToolSetting{}, fmt.Errorf("sqlite: set tool setting: %w", err)
	}
	ts.UpdatedAt = now()
	_, err := r.s.writer.ExecContext(ctx,
		`INSERT INTO tool_settings (workspace_id, tool, enabled, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (workspace_id, tool) DO UPDATE SET enabled = excluded.enabled, updated_at = excluded.updated_at`,
		ts.WorkspaceID, ts.Tool, ts.Enabled, micros(ts.UpdatedAt))
	if err != nil {
		return store.ToolSetting{}, fmt.Errorf("sqlite: set tool setting %q: %w", ts.Tool, mapErr(err))
	}
	return ts, nil
}

func (r toolSettings) List(ctx context.Context, workspaceID string) ([]store.ToolSetting, error) {
	out, err := queryList(ctx, r.s.reader, func(sc scanner) (store.ToolSetting, error) {
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
	if err != nil {
		return nil, fmt.Errorf("sqlite: list tool settings: %w", err)
	}
	return out, nil
}
