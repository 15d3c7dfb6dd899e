package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/store"
)

// MCPServers implements store.Store.
func (s *Store) MCPServers() store.MCPServers { return mcpServers{s} }

type mcpServers struct{ s *Store }

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

func (r mcpServers) Create(ctx context.Context, m store.MCPServer) (store.MCPServer, error) {
	if err := m.Validate(); err != nil {
		return store.MCPServer{}, fmt.Errorf("postgres: create mcp server: %w", err)
	}
	if m.ID == "" {
		m.ID = store.NewID()
	}
	m.Ciphertext = append([]byte(nil), m.Ciphertext...)
	if len(m.Ciphertext) == 0 {
		m.Ciphertext = nil
	}
	m.CreatedAt = now()
	_, err := r.s.pool.Exec(ctx,
		`INSERT INTO mcp_servers (`+mcpServerColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		m.ID, m.WorkspaceID, m.Name, m.URL, m.Ciphertext, m.KeyID, m.CreatedAt)
	if err != nil {
		return store.MCPServer{}, fmt.Errorf("postgres: create mcp server %q: %w", m.Name, mapErr(err))
	}
	return m, nil
}

func (r mcpServers) List(ctx context.Context, workspaceID string) ([]store.MCPServer, error) {
	out, err := queryList(ctx, r.s, scanMCPServer,
		`SELECT `+mcpServerColumns+` FROM mcp_servers WHERE workspace_id = $1 ORDER BY name COLLATE "C"`, workspaceID)
	if err != nil {
		return nil, fmt.Errorf("postgres: list mcp servers: %w", err)
	}
	return out, nil
}

func (r mcpServers) ListAll(ctx context.Context) ([]store.MCPServer, error) {
	out, err := queryList(ctx, r.s, scanMCPServer,
		`SELECT `+mcpServerColumns+` FROM mcp_servers ORDER BY workspace_id COLLATE "C", name COLLATE "C"`)
	if err != nil {
		return nil, fmt.Errorf("postgres: list all mcp servers: %w", err)
	}
	return out, nil
}

func (r mcpServers) Delete(ctx context.Context, workspaceID, name string) error {
	tag, err := r.s.pool.Exec(ctx, `DELETE FROM mcp_servers WHERE workspace_id = $1 AND name = $2`, workspaceID, name)
	if err == nil {
		err = affected(tag)
	}
	if err != nil {
		return fmt.Errorf("postgres: delete mcp server %q: %w", name, mapErr(err))
	}
	return nil
}
