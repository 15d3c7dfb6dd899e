package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/store"
)

type agents struct{ s *Store }

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

// prepareAgent validates a, stamps it and returns its column values for
// tools and params.
func prepareAgent(a store.Agent) (store.Agent, []string, []byte, error) {
	if err := a.Validate(); err != nil {
		return store.Agent{}, nil, nil, err
	}
	params, err := json.Marshal(a.Params)
	if err != nil {
		return store.Agent{}, nil, nil, fmt.Errorf("encode params: %w", err)
	}
	tools := append([]string{}, a.Tools...) // non-nil: the column is NOT NULL
	t := now()
	a.CreatedAt, a.UpdatedAt = t, t
	return a, tools, params, nil
}

// RETURNING the whole row hands back what a later read will return,
// including params as jsonb formats them.
func (r agents) Create(ctx context.Context, a store.Agent) (store.Agent, error) {
	a, tools, params, err := prepareAgent(a)
	if err != nil {
		return store.Agent{}, fmt.Errorf("postgres: create agent: %w", err)
	}
	if a.ID == "" {
		a.ID = store.NewID()
	}
	got, err := scanAgent(r.s.pool.QueryRow(ctx,
		`INSERT INTO agents (`+agentColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
		RETURNING `+agentColumns,
		a.ID, a.WorkspaceID, a.Name, a.Model, a.Instructions, tools, params, a.Source, a.CreatedAt, a.UpdatedAt))
	if err != nil {
		return store.Agent{}, fmt.Errorf("postgres: create agent %q: %w", a.Name, mapErr(err))
	}
	return got, nil
}

func (r agents) Get(ctx context.Context, workspaceID, id string) (store.Agent, error) {
	a, err := scanAgent(r.s.pool.QueryRow(ctx,
		`SELECT `+agentColumns+` FROM agents WHERE workspace_id = $1 AND id = $2`, workspaceID, id))
	if err != nil {
		return store.Agent{}, fmt.Errorf("postgres: get agent %s: %w", id, mapErr(err))
	}
	return a, nil
}

func (r agents) GetByName(ctx context.Context, workspaceID, name string) (store.Agent, error) {
	a, err := scanAgent(r.s.pool.QueryRow(ctx,
		`SELECT `+agentColumns+` FROM agents WHERE workspace_id = $1 AND name = $2`, workspaceID, name))
	if err != nil {
		return store.Agent{}, fmt.Errorf("postgres: get agent %q: %w", name, mapErr(err))
	}
	return a, nil
}

func (r agents) List(ctx context.Context, workspaceID string) ([]store.Agent, error) {
	out, err := queryList(ctx, r.s, scanAgent,
		`SELECT `+agentColumns+` FROM agents WHERE workspace_id = $1 ORDER BY name COLLATE "C"`, workspaceID)
	if err != nil {
		return nil, fmt.Errorf("postgres: list agents: %w", err)
	}
	return out, nil
}

func (r agents) Update(ctx context.Context, a store.Agent) (store.Agent, error) {
	a, tools, params, err := prepareAgent(a)
	if err != nil {
		return store.Agent{}, fmt.Errorf("postgres: update agent: %w", err)
	}
	got, err := scanAgent(r.s.pool.QueryRow(ctx,
		`UPDATE agents SET name = $1, model = $2, instructions = $3, tools = $4, params = $5, source = $6, updated_at = $7
		WHERE workspace_id = $8 AND id = $9 RETURNING `+agentColumns,
		a.Name, a.Model, a.Instructions, tools, params, a.Source, a.UpdatedAt, a.WorkspaceID, a.ID))
	if err != nil {
		return store.Agent{}, fmt.Errorf("postgres: update agent %s: %w", a.ID, mapErr(err))
	}
	return got, nil
}

func (r agents) Delete(ctx context.Context, workspaceID, id string) error {
	tag, err := r.s.pool.Exec(ctx, `DELETE FROM agents WHERE workspace_id = $1 AND id = $2`, workspaceID, id)
	if err == nil {
		err = affected(tag)
	}
	if err != nil {
		return fmt.Errorf("postgres: delete agent %s: %w", id, mapErr(err))
	}
	return nil
}

func (r agents) Upsert(ctx context.Context, a store.Agent) (store.Agent, error) {
	a, tools, params, err := prepareAgent(a)
	if err != nil {
		return store.Agent{}, fmt.Errorf("postgres: upsert agent: %w", err)
	}
	if a.ID == "" {
		a.ID = store.NewID()
	}
	got, err := scanAgent(r.s.pool.QueryRow(ctx,
		`INSERT INTO agents (`+agentColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
		ON CONFLICT (workspace_id, name) DO UPDATE SET
			model = excluded.model, instructions = excluded.instructions, tools = excluded.tools,
			params = excluded.params, source = excluded.source, updated_at = excluded.updated_at
		RETURNING `+agentColumns,
		a.ID, a.WorkspaceID, a.Name, a.Model, a.Instructions, tools, params, a.Source, a.CreatedAt, a.UpdatedAt))
	if err != nil {
		return store.Agent{}, fmt.Errorf("postgres: upsert agent %q: %w", a.Name, mapErr(err))
	}
	return got, nil
}
