package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/store"
)

// ToolSettings implements store.Store.
func (s *Store) ToolSettings() store.ToolSettings { return toolSettings{s} }

type toolSettings struct{ s *Store }

func (r toolSettings) Set(ctx context.Context, ts store.ToolSetting) (store.ToolSetting, error) {
	if err := ts.Validate(); err != nil {
		return store.ToolSetting{}, fmt.Errorf("postgres: set tool setting: %w", err)
	}
	ts.UpdatedAt = now()
	_, err := r.s.pool.Exec(ctx,
		`INSERT INTO tool_settings (workspace_id, tool, enabled, updated_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (workspace_id, tool) DO UPDATE SET enabled = excluded.enabled, updated_at = excluded.updated_at`,
		ts.WorkspaceID, ts.Tool, ts.Enabled, ts.UpdatedAt)
	if err != nil {
		return store.ToolSetting{}, fmt.Errorf("postgres: set tool setting %q: %w", ts.Tool, mapErr(err))
	}
	return ts, nil
}

func (r toolSettings) List(ctx context.Context, workspaceID string) ([]store.ToolSetting, error) {
	out, err := queryList(ctx, r.s, func(row pgx.Row) (store.ToolSetting, error) {
		var ts store.ToolSetting
		if err := row.Scan(&ts.WorkspaceID, &ts.Tool, &ts.Enabled, &ts.UpdatedAt); err != nil {
			return store.ToolSetting{}, err
		}
		ts.UpdatedAt = ts.UpdatedAt.UTC()
		return ts, nil
	}, `SELECT workspace_id, tool, enabled, updated_at FROM tool_settings WHERE workspace_id = $1 ORDER BY tool COLLATE "C"`, workspaceID)
	if err != nil {
		return nil, fmt.Errorf("postgres: list tool settings: %w", err)
	}
	return out, nil
}
