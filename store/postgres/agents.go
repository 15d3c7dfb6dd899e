package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/store"
)

const agentColumns = `id, workspace_id, name, model, instructions, tools, params, source, created_at, updated_at`

func scanAgent(row pgx.Row) (store.Agent, error) {
	var (
		a      store.Agent
		params []byte
	)
	if err := row.Scan(&a.ID, &a.WorkspaceID, &a.Name, &a.Model, &a.Instructions,
		&a.Tools, &params, &a.Source, &a.CreatedAt, &a.UpdatedAt); err != nil {
		return store.Agent{}, err
	}
	if len(a.Tools) == 0 {
		a.Tools = nil
	}
	if err := json.Unmarshal(params, &a.Params); err != nil {
		return store.Agent{}, fmt.Errorf("decode params of agent %s: %w", a.ID, err)
	}
	a.CreatedAt, a.UpdatedAt = a.CreatedAt.UTC(), a.UpdatedAt.UTC()
	return a, nil
}

// agentArgs returns the arguments of an insert of p's agent; tools is
// never nil, as the column is NOT NULL.
func agentArgs(p *store.AgentWriteParams) []any {
	a := p.Agent
	return []any{a.ID, a.WorkspaceID, a.Name, a.Model, a.Instructions, append([]string{}, a.Tools...), p.Params,
		a.Source, a.CreatedAt, a.UpdatedAt}
}

// AgentInsert returns the whole row, which hands back what a later read will
// return, including params as jsonb formats them.
func (d driver) AgentInsert(ctx context.Context, p *store.AgentWriteParams) (store.Agent, error) {
	got, err := scanAgent(d.s.pool.QueryRow(ctx,
		`INSERT INTO agents (`+agentColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
		RETURNING `+agentColumns, agentArgs(p)...))
	return got, mapErr(err)
}

func (d driver) AgentGet(ctx context.Context, workspaceID, id string) (store.Agent, error) {
	a, err := scanAgent(d.s.pool.QueryRow(ctx,
		`SELECT `+agentColumns+` FROM agents WHERE workspace_id = $1 AND id = $2`, workspaceID, id))
	return a, mapErr(err)
}

func (d driver) AgentGetByName(ctx context.Context, workspaceID, name string) (store.Agent, error) {
	a, err := scanAgent(d.s.pool.QueryRow(ctx,
		`SELECT `+agentColumns+` FROM agents WHERE workspace_id = $1 AND name = $2`, workspaceID, name))
	return a, mapErr(err)
}

func (d driver) AgentList(ctx context.Context, workspaceID string) ([]store.Agent, error) {
	return queryList(ctx, d.s, scanAgent,
		`SELECT `+agentColumns+` FROM agents WHERE workspace_id = $1 ORDER BY name COLLATE "C"`, workspaceID)
}

func (d driver) AgentUpdate(ctx context.Context, p *store.AgentWriteParams) (store.Agent, error) {
	a := p.Agent
	got, err := scanAgent(d.s.pool.QueryRow(ctx,
		`UPDATE agents SET name = $1, model = $2, instructions = $3, tools = $4, params = $5, source = $6, updated_at = $7
		WHERE workspace_id = $8 AND id = $9 RETURNING `+agentColumns,
		a.Name, a.Model, a.Instructions, append([]string{}, a.Tools...), p.Params, a.Source, a.UpdatedAt, a.WorkspaceID, a.ID))
	return got, mapErr(err)
}

func (d driver) AgentDelete(ctx context.Context, workspaceID, id string) error {
	tag, err := d.s.pool.Exec(ctx, `DELETE FROM agents WHERE workspace_id = $1 AND id = $2`, workspaceID, id)
	if err == nil {
		err = affected(tag)
	}
	return mapErr(err)
}

func (d driver) AgentUpsert(ctx context.Context, p *store.AgentWriteParams) (store.Agent, error) {
	got, err := scanAgent(d.s.pool.QueryRow(ctx,
		`INSERT INTO agents (`+agentColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
		ON CONFLICT (workspace_id, name) DO UPDATE SET
			model = excluded.model, instructions = excluded.instructions, tools = excluded.tools,
			params = excluded.params, source = excluded.source, updated_at = excluded.updated_at
		RETURNING `+agentColumns, agentArgs(p)...))
	return got, mapErr(err)
}
