package sqlite

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentcraftlab/agentcraft/store"
)

type agents struct{ s *Store }

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

// encodeAgent returns the JSON columns of a.
func encodeAgent(a store.Agent) (tools, params string, err error) {
	t := a.Tools
	if t == nil {
		t = []string{}
	}
	tb, err := json.Marshal(t)
	if err != nil {
		return "", "", fmt.Errorf("encode tools: %w", err)
	}
	pb, err := json.Marshal(a.Params)
	if err != nil {
		return "", "", fmt.Errorf("encode params: %w", err)
	}
	return string(tb), string(pb), nil
}

// prepareAgent validates a and fills what the caller does not set.
func prepareAgent(a store.Agent) (store.Agent, string, string, error) {
	if err := a.Validate(); err != nil {
		return store.Agent{}, "", "", err
	}
	tools, params, err := encodeAgent(a)
	if err != nil {
		return store.Agent{}, "", "", err
	}
	// Return what a read will return: the stored copy, not the caller's
	// slices, with an empty tool list as nil.
	a.Tools = append([]string(nil), a.Tools...)
	if len(a.Tools) == 0 {
		a.Tools = nil
	}
	a.Params = store.AgentParams{}
	if err := json.Unmarshal([]byte(params), &a.Params); err != nil {
		return store.Agent{}, "", "", fmt.Errorf("decode params: %w", err)
	}
	t := now()
	a.CreatedAt, a.UpdatedAt = t, t
	return a, tools, params, nil
}

func (r agents) Create(ctx context.Context, a store.Agent) (store.Agent, error) {
	a, tools, params, err := prepareAgent(a)
	if err != nil {
		return store.Agent{}, fmt.Errorf("sqlite: create agent: %w", err)
	}
	if a.ID == "" {
		a.ID = store.NewID()
	}
	_, err = r.s.writer.ExecContext(ctx,
		`INSERT INTO agents (`+agentColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, a.WorkspaceID, a.Name, a.Model, a.Instructions, tools, params, a.Source,
		micros(a.CreatedAt), micros(a.UpdatedAt))
	if err != nil {
		return store.Agent{}, fmt.Errorf("sqlite: create agent %q: %w", a.Name, mapErr(err))
	}
	return a, nil
}

func (r agents) Get(ctx context.Context, workspaceID, id string) (store.Agent, error) {
	a, err := scanAgent(r.s.reader.QueryRowContext(ctx,
		`SELECT `+agentColumns+` FROM agents WHERE workspace_id = ? AND id = ?`, workspaceID, id))
	if err != nil {
		return store.Agent{}, fmt.Errorf("sqlite: get agent %s: %w", id, mapErr(err))
	}
	return a, nil
}

func (r agents) GetByName(ctx context.Context, workspaceID, name string) (store.Agent, error) {
	a, err := scanAgent(r.s.reader.QueryRowContext(ctx,
		`SELECT `+agentColumns+` FROM agents WHERE workspace_id = ? AND name = ?`, workspaceID, name))
	if err != nil {
		return store.Agent{}, fmt.Errorf("sqlite: get agent %q: %w", name, mapErr(err))
	}
	return a, nil
}

func (r agents) List(ctx context.Context, workspaceID string) ([]store.Agent, error) {
	out, err := queryList(ctx, r.s.reader, scanAgent,
		`SELECT `+agentColumns+` FROM agents WHERE workspace_id = ? ORDER BY name`, workspaceID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list agents: %w", err)
	}
	return out, nil
}

func (r agents) Update(ctx context.Context, a store.Agent) (store.Agent, error) {
	a, tools, params, err := prepareAgent(a)
	if err != nil {
		return store.Agent{}, fmt.Errorf("sqlite: update agent: %w", err)
	}
	var created int64
	err = r.s.writer.QueryRowContext(ctx,
		`UPDATE agents SET name = ?, model = ?, instructions = ?, tools = ?, params = ?, source = ?, updated_at = ?
		WHERE workspace_id = ? AND id = ? RETURNING created_at`,
		a.Name, a.Model, a.Instructions, tools, params, a.Source, micros(a.UpdatedAt),
		a.WorkspaceID, a.ID).Scan(&created)
	if err != nil {
		return store.Agent{}, fmt.Errorf("sqlite: update agent %s: %w", a.ID, mapErr(err))
	}
	a.CreatedAt = fromMicros(created)
	return a, nil
}

func (r agents) Delete(ctx context.Context, workspaceID, id string) error {
	res, err := r.s.writer.ExecContext(ctx, `DELETE FROM agents WHERE workspace_id = ? AND id = ?`, workspaceID, id)
	if err == nil {
		err = rowsAffected(res)
	}
	if err != nil {
		return fmt.Errorf("sqlite: delete agent %s: %w", id, mapErr(err))
	}
	return nil
}

func (r agents) Upsert(ctx context.Context, a store.Agent) (store.Agent, error) {
	a, tools, params, err := prepareAgent(a)
	if err != nil {
		return store.Agent{}, fmt.Errorf("sqlite: upsert agent: %w", err)
	}
	if a.ID == "" {
		a.ID = store.NewID()
	}
	var created int64
	err = r.s.writer.QueryRowContext(ctx,
		`INSERT INTO agents (`+agentColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (workspace_id, name) DO UPDATE SET
			model = excluded.model, instructions = excluded.instructions, tools = excluded.tools,
			params = excluded.params, source = excluded.source, updated_at = excluded.updated_at
		RETURNING id, created_at`,
		a.ID, a.WorkspaceID, a.Name, a.Model, a.Instructions, tools, params, a.Source,
		micros(a.CreatedAt), micros(a.UpdatedAt)).Scan(&a.ID, &created)
	if err != nil {
		return store.Agent{}, fmt.Errorf("sqlite: upsert agent %q: %w", a.Name, mapErr(err))
	}
	a.CreatedAt = fromMicros(created)
	return a, nil
}
