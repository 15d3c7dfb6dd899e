package sqlite

import (
	"context"
	"fmt"

	"github.com/agentcraftlab/agentcraft/store"
)

// MCPServers implements store.Store.
func (s *Store) MCPServers() store.MCPServers { return mcpServers{s} }

type mcpServers struct{ s *Store }

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

func (r mcpServers) Create(ctx context.Context, m store.MCPServer) (store.MCPServer, error) {
	if err := m.Validate(); err != nil {
		return store.MCPServer{}, fmt.Errorf("sqlite: create mcp server: %w", err)
	}
	if m.ID == "" {
		m.ID = store.NewID()
	}
	m.Ciphertext = append([]byte(nil), m.Ciphertext...)
	if len(m.Ciphertext) == 0 {
		m.Ciphertext = nil
	}
	m.CreatedAt = now()
	_, err := r.s.writer.ExecContext(ctx,
		`INSERT INTO mcp_servers (`+mcpServerColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		m.ID, m.WorkspaceID, m.Name, m.URL, m.Ciphertext, m.KeyID, micros(m.CreatedAt))
	if err != nil {
		return store.MCPServer{}, fmt.Errorf("sqlite: create mcp server %q: %w", m.Name, mapErr(err))
	}
	return m, nil
}

func (r mcpServers) List(ctx context.Context, workspaceID string) ([]store.MCPServer, error) {
	out, err := queryList(ctx, r.s.reader, scanMCPServer,
		`SELECT `+mcpServerColumns+` FROM mcp_servers WHERE workspace_id = ? ORDER BY name`, workspaceID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list mcp servers: %w", err)
	}
	return out, nil
}

func (r mcpServers) ListAll(ctx context.Context) ([]store.MCPServer, error) {
	out, err := queryList(ctx, r.s.reader, scanMCPServer,
		`SELECT `+mcpServerColumns+` FROM mcp_servers ORDER BY workspace_id, name`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list all mcp servers: %w", err)
	}
	return out, nil
}

func (r mcpServers) Delete(ctx context.Context, workspaceID, name string) error {
	res, err := r.s.writer.ExecContext(ctx, `DELETE FROM mcp_servers WHERE workspace_id = ? AND name = ?`, workspaceID, name)
	if err == nil {
		err = rowsAffected(res)
	}
	if err != nil {
		return fmt.Errorf("sqlite: delete mcp server %q: %w", name, mapErr(err))
	}
	return nil
}
