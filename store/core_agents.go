package store

import (
	"context"
	"encoding/json"
	"fmt"
)

// agents is Agents on a Driver.
type agents struct{ c Core }

// prepare validates a and returns what a read will return (the stored copy,
// not the caller's slices, an empty tool list as nil, params as decoded
// from their JSON), stamped now, with the params' JSON.
func (agents) prepare(a Agent) (*AgentWriteParams, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	params, err := json.Marshal(a.Params)
	if err != nil {
		return nil, fmt.Errorf("encode params: %w", err)
	}
	a.Tools = append([]string(nil), a.Tools...)
	if len(a.Tools) == 0 {
		a.Tools = nil
	}
	a.Params = AgentParams{}
	if err := json.Unmarshal(params, &a.Params); err != nil {
		return nil, fmt.Errorf("decode params: %w", err)
	}
	t := now()
	a.CreatedAt, a.UpdatedAt = t, t
	return &AgentWriteParams{Agent: a, Params: params}, nil
}

func (r agents) Create(ctx context.Context, a Agent) (Agent, error) {
	p, err := r.prepare(a)
	if err != nil {
		return Agent{}, r.c.errorf("create agent: %w", err)
	}
	if p.Agent.ID == "" {
		p.Agent.ID = NewID()
	}
	got, err := r.c.d.AgentInsert(ctx, p)
	if err != nil {
		return Agent{}, r.c.errorf("create agent %q: %w", a.Name, err)
	}
	return got, nil
}

func (r agents) Get(ctx context.Context, workspaceID, id string) (Agent, error) {
	a, err := r.c.d.AgentGet(ctx, workspaceID, id)
	if err != nil {
		return Agent{}, r.c.errorf("get agent %s: %w", id, err)
	}
	return a, nil
}

func (r agents) GetByName(ctx context.Context, workspaceID, name string) (Agent, error) {
	a, err := r.c.d.AgentGetByName(ctx, workspaceID, name)
	if err != nil {
		return Agent{}, r.c.errorf("get agent %q: %w", name, err)
	}
	return a, nil
}

func (r agents) List(ctx context.Context, workspaceID string) ([]Agent, error) {
	out, err := r.c.d.AgentList(ctx, workspaceID)
	if err != nil {
		return nil, r.c.errorf("list agents: %w", err)
	}
	return out, nil
}

func (r agents) Update(ctx context.Context, a Agent) (Agent, error) {
	p, err := r.prepare(a)
	if err != nil {
		return Agent{}, r.c.errorf("update agent: %w", err)
	}
	got, err := r.c.d.AgentUpdate(ctx, p)
	if err != nil {
		return Agent{}, r.c.errorf("update agent %s: %w", a.ID, err)
	}
	return got, nil
}

func (r agents) Delete(ctx context.Context, workspaceID, id string) error {
	if err := r.c.d.AgentDelete(ctx, workspaceID, id); err != nil {
		return r.c.errorf("delete agent %s: %w", id, err)
	}
	return nil
}

func (r agents) Upsert(ctx context.Context, a Agent) (Agent, error) {
	p, err := r.prepare(a)
	if err != nil {
		return Agent{}, r.c.errorf("upsert agent: %w", err)
	}
	if p.Agent.ID == "" {
		p.Agent.ID = NewID()
	}
	got, err := r.c.d.AgentUpsert(ctx, p)
	if err != nil {
		return Agent{}, r.c.errorf("upsert agent %q: %w", a.Name, err)
	}
	return got, nil
}

// providers is Providers on a Driver.
type providers struct{ c Core }

// prepare validates p and stamps it now, with a copy of its settings (nil
// when empty).
func (providers) prepare(p Provider) (*ProviderWriteParams, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	p.Settings = cloneJSON(p.Settings)
	t := now()
	p.CreatedAt, p.UpdatedAt = t, t
	return &ProviderWriteParams{Provider: p}, nil
}

func (r providers) Create(ctx context.Context, p Provider) (Provider, error) {
	w, err := r.prepare(p)
	if err != nil {
		return Provider{}, r.c.errorf("create provider: %w", err)
	}
	if w.Provider.ID == "" {
		w.Provider.ID = NewID()
	}
	got, err := r.c.d.ProviderInsert(ctx, w)
	if err != nil {
		return Provider{}, r.c.errorf("create provider %q: %w", p.Name, err)
	}
	return got, nil
}

func (r providers) Get(ctx context.Context, workspaceID, id string) (Provider, error) {
	p, err := r.c.d.ProviderGet(ctx, workspaceID, id)
	if err != nil {
		return Provider{}, r.c.errorf("get provider %s: %w", id, err)
	}
	return p, nil
}

func (r providers) GetByName(ctx context.Context, workspaceID, name string) (Provider, error) {
	p, err := r.c.d.ProviderGetByName(ctx, workspaceID, name)
	if err != nil {
		return Provider{}, r.c.errorf("get provider %q: %w", name, err)
	}
	return p, nil
}

func (r providers) List(ctx context.Context, workspaceID string) ([]Provider, error) {
	out, err := r.c.d.ProviderList(ctx, workspaceID)
	if err != nil {
		return nil, r.c.errorf("list providers: %w", err)
	}
	return out, nil
}

func (r providers) Update(ctx context.Context, p Provider) (Provider, error) {
	w, err := r.prepare(p)
	if err != nil {
		return Provider{}, r.c.errorf("update provider: %w", err)
	}
	got, err := r.c.d.ProviderUpdate(ctx, w)
	if err != nil {
		return Provider{}, r.c.errorf("update provider %s: %w", p.ID, err)
	}
	return got, nil
}

func (r providers) Delete(ctx context.Context, workspaceID, id string) error {
	if err := r.c.d.ProviderDelete(ctx, workspaceID, id); err != nil {
		return r.c.errorf("delete provider %s: %w", id, err)
	}
	return nil
}

func (r providers) Upsert(ctx context.Context, p Provider) (Provider, error) {
	w, err := r.prepare(p)
	if err != nil {
		return Provider{}, r.c.errorf("upsert provider: %w", err)
	}
	if w.Provider.ID == "" {
		w.Provider.ID = NewID()
	}
	got, err := r.c.d.ProviderUpsert(ctx, w)
	if err != nil {
		return Provider{}, r.c.errorf("upsert provider %q: %w", p.Name, err)
	}
	return got, nil
}
