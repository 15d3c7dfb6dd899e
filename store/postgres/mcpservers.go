package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/store"
)

const mcpServerColumns = `id, workspace_id, name, url, ciphertext, key_id, created_at`

func scanMCPServer(row pgx.Row) (store.MCPServer, error) {
	var m store.MCPServer
	if err := row.Scan(&m.ID, &m.WorkspaceID, &m.Name, &m.URL, &m.Ciphertext, &m.KeyID, &m.CreatedAt); err != nil {
		return store.MCPServer{}, err
	}
	if len(m.Ciphertext) == 0 {
		m.Ciphertext = nil
	}
	m.CreatedAt = m.CreatedAt.UTC()
	return m, nil
}

func (d driver) MCPServerInsert(ctx context.Context, p *store.MCPServerInsertParams) error {
	m := p.Server
	_, err := d.s.pool.Exec(ctx,
		`INSERT INTO mcp_servers (`+mcpServerColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		m.ID, m.WorkspaceID, m.Name, m.URL, m.Ciphertext, m.KeyID, m.CreatedAt)
	return mapErr(err)
}

func (d driver) MCPServerList(ctx context.Context, workspaceID string) ([]store.MCPServer, error) {
	return queryList(ctx, d.s, scanMCPServer,
		`SELECT `+mcpServerColumns+` FROM mcp_servers WHERE workspace_id = $1 ORDER BY name COLLATE "C"`, workspaceID)
}

func (d driver) MCPServerListAll(ctx context.Context) ([]store.MCPServer, error) {
	return queryList(ctx, d.s, scanMCPServer,
		`SELECT `+mcpServerColumns+` FROM mcp_servers ORDER BY workspace_id COLLATE "C", name COLLATE "C"`)
}

func (d driver) MCPServerDelete(ctx context.Context, workspaceID, name string) error {
	tag, err := d.s.pool.Exec(ctx, `DELETE FROM mcp_servers WHERE workspace_id = $1 AND name = $2`, workspaceID, name)
	if err == nil {
		err = affected(tag)
	}
	return mapErr(err)
}
