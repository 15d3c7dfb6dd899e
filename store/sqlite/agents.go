package sqlite

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentcraftlab/agentcraft/store"
)

const agentColumns = `id, workspace_id, name, model, instructions, tools, params, source, created_at, updated_at`

func scanAgent(sc scanner) (store.Agent, error) {
	var (
		a                store.Agent
		tools, params    string
		created, updated int64
	)
	if err := sc.Scan(&a.ID, &a.WorkspaceID, &a.Name, &a.Model, &a.Instructions,
		&tools, &params, &a.Source, &created, &updated); err != nil {
		return store.Agent{}, err
	}
	if err := json.Unmarshal([]byte(tools), &a.Tools); err != nil {
		return store.Agent{}, fmt.Errorf("decode tools of agent %s: %w", a.ID, err)
	}
	if len(a.Tools) == 0 {
		a.Tools = nil
	}
	if err := json.Unmarshal([]byte(params), &a.Params); err != nil {
		return store.Agent{}, fmt.Errorf("decode params of agent %s: %w", a.ID, err)
	}
	a.CreatedAt = fromMicros(created)
	a.UpdatedAt = fromMicros(updated)
	return a, nil
}

// encodeTools returns the tools column of a: a JSON array, never null.
func encodeTools(a store.Agent) (string, error) {
	t := a.Tools
	if t == nil {
		t = []string{}
	}
	tb, err := json.Marshal(t)
	if err != nil {
		return "", fmt.Errorf("encode tools: %w", err)
	}
	return string(tb), nil
}

// agentArgs returns the arguments of an insert of p's agent.
func agentArgs(p *store.AgentWriteParams) ([]any, error) {
	a := p.Agent
	tools, err := encodeTools(a)
	if err != nil {
		return nil, err
	}
	return []any{a.ID, a.WorkspaceID, a.Name, a.Model, a.Instructions, tools, string(p.Params), a.Source,
		micros(a.CreatedAt), micros(a.UpdatedAt)}, nil
}

// AgentInsert returns the row it was given: SQLite stores what it is given.
func (d driver) AgentInsert(ctx context.Context, p *store.AgentWriteParams) (store.Agent, error) {
	args, err := agentArgs(p)
	if err != nil {
		return store.Agent{}, err
	}
	if _, err := d.s.writer.ExecContext(ctx,
		`INSERT INTO agents (`+agentColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, args...); err != nil {
		return store.Agent{}, mapErr(err)
	}
	return p.Agent, nil
}

func (d driver) AgentGet(ctx context.Context, workspaceID, id string) (store.Agent, error) {
	a, err := scanAgent(d.s.reader.QueryRowContext(ctx,
		`SELECT `+agentColumns+` FROM agents WHERE workspace_id = ? AND id = ?`, workspaceID, id))
	return a, mapErr(err)
}

func (d driver) AgentGetByName(ctx context.Context, workspaceID, name string) (store.Agent, error) {
	a, err := scanAgent(d.s.reader.QueryRowContext(ctx,
		`SELECT `+agentColumns+` FROM agents WHERE workspace_id = ? AND name = ?`, workspaceID, name))
	return a, mapErr(err)
}

func (d driver) AgentList(ctx context.Context, workspaceID string) ([]store.Agent, error) {
	return queryList(ctx, d.s.reader, scanAgent,
		`SELECT `+agentColumns+` FROM agents WHERE workspace_id = ? ORDER BY name`, workspaceID)
}

func (d driver) AgentUpdate(ctx context.Context, p *store.AgentWriteParams) (store.Agent, error) {
	a := p.Agent
	tools, err := encodeTools(a)
	if err != nil {
		return store.Agent{}, err
	}
	var created int64
	err = d.s.writer.QueryRowContext(ctx,
		`UPDATE agents SET name = ?, model = ?, instructions = ?, tools = ?, params = ?, source = ?, updated_at = ?
		WHERE workspace_id = ? AND id = ? RETURNING created_at`,
		a.Name, a.Model, a.Instructions, tools, string(p.Params), a.Source, micros(a.UpdatedAt),
		a.WorkspaceID, a.ID).Scan(&created)
	if err != nil {
		return store.Agent{}, mapErr(err)
	}
	a.CreatedAt = fromMicros(created)
	return a, nil
}

func (d driver) AgentDelete(ctx context.Context, workspaceID, id string) error {
	res, err := d.s.writer.ExecContext(ctx, `DELETE FROM agents WHERE workspace_id = ? AND id = ?`, workspaceID, id)
	if err == nil {
		err = rowsAffected(res)
	}
	return mapErr(err)
}

func (d driver) AgentUpsert(ctx context.Context, p *store.AgentWriteParams) (store.Agent, error) {
	a := p.Agent
	args, err := agentArgs(p)
	if err != nil {
		return store.Agent{}, err
	}
	var created int64
	err = d.s.writer.QueryRowContext(ctx,
		`INSERT INTO agents (`+agentColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (workspace_id, name) DO UPDATE SET
			model = excluded.model, instructions = excluded.instructions, tools = excluded.tools,
			params = excluded.params, source = excluded.source, updated_at = excluded.updated_at
		RETURNING id, created_at`, args...).Scan(&a.ID, &created)
	if err != nil {
		return store.Agent{}, mapErr(err)
	}
	a.CreatedAt = fromMicros(created)
	return a, nil
}
