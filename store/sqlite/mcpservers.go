package sqlite

import (
	"context"

	"github.com/agentcraftlab/agentcraft/store"
)

const mcpServerColumns = `id, workspace_id, name, url, ciphertext, key_id, created_at`

func scanMCPServer(sc scanner) (store.MCPServer, error) {
	var (
		m       store.MCPServer
		created int64
	)
	if err := sc.Scan(&m.ID, &m.WorkspaceID, &m.Name, &m.URL, &m.Ciphertext, &m.KeyID, &created); err != nil {
		return store.MCPServer{}, err
	}
	if len(m.Ciphertext) == 0 {
		m.Ciphertext = nil
	}
	m.CreatedAt = fromMicros(created)
	return m, nil
}

func (d driver) MCPServerInsert(ctx context.Context, p *store.MCPServerInsertParams) error {
	m := p.Server
	_, err := d.s.writer.ExecContext(ctx,
		`INSERT INTO mcp_servers (`+mcpServerColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		m.ID, m.WorkspaceID, m.Name, m.URL, m.Ciphertext, m.KeyID, micros(m.CreatedAt))
	return mapErr(err)
}

func (d driver) MCPServerList(ctx context.Context, workspaceID string) ([]store.MCPServer, error) {
	return queryList(ctx, d.s.reader, scanMCPServer,
		`SELECT `+mcpServerColumns+` FROM mcp_servers WHERE workspace_id = ? ORDER BY name`, workspaceID)
}

func (d driver) MCPServerListAll(ctx context.Context) ([]store.MCPServer, error) {
	return queryList(ctx, d.s.reader, scanMCPServer,
		`SELECT `+mcpServerColumns+` FROM mcp_servers ORDER BY workspace_id, name`)
}

func (d driver) MCPServerDelete(ctx context.Context, workspaceID, name string) error {
	res, err := d.s.writer.ExecContext(ctx, `DELETE FROM mcp_servers WHERE workspace_id = ? AND name = ?`, workspaceID, name)
	if err == nil {
		err = rowsAffected(res)
	}
	return mapErr(err)
}
