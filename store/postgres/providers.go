package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/store"
)

type providers struct{ s *Store }

const providerColumns = `id, workspace_id, name, type, base_url, settings, source, created_at, updated_at`

func scanProvider(row pgx.Row) (store.Provider, error) {
	var (
		p        store.Provider
		settings []byte
	)
	if err := row.Scan(&p.ID, &p.WorkspaceID, &p.Name, &p.Type, &p.BaseURL, &settings,
		&p.Source, &p.CreatedAt, &p.UpdatedAt); err != nil {
		return store.Provider{}, err
	}
	if settings != nil {
		p.Settings = json.RawMessage(settings)
	}
	p.CreatedAt, p.UpdatedAt = p.CreatedAt.UTC(), p.UpdatedAt.UTC()
	return p, nil
}

// prepareProvider validates p, stamps it and returns its settings column
// (nil for SQL NULL).
func prepareProvider(p store.Provider) (store.Provider, []byte, error) {
	if err := p.Validate(); err != nil {
		return store.Provider{}, nil, err
	}
	var settings []byte
	if len(p.Settings) > 0 {
		settings = []byte(p.Settings)
	}
	t := now()
	p.CreatedAt, p.UpdatedAt = t, t
	return p, settings, nil
}

func (r providers) Create(ctx context.Context, p store.Provider) (store.Provider, error) {
	p, settings, err := prepareProvider(p)
	if err != nil {
		return store.Provider{}, fmt.Errorf("postgres: create provider: %w", err)
	}
	if p.ID == "" {
		p.ID = store.NewID()
	}
	got, err := scanProvider(r.s.pool.QueryRow(ctx,
		`INSERT INTO providers (`+providerColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		RETURNING `+providerColumns,
		p.ID, p.WorkspaceID, p.Name, p.Type, p.BaseURL, settings, p.Source, p.CreatedAt, p.UpdatedAt))
	if err != nil {
		return store.Provider{}, fmt.Errorf("postgres: create provider %q: %w", p.Name, mapErr(err))
	}
	return got, nil
}

func (r providers) Get(ctx context.Context, workspaceID, id string) (store.Provider, error) {
	p, err := scanProvider(r.s.pool.QueryRow(ctx,
		`SELECT `+providerColumns+` FROM providers WHERE workspace_id = $1 AND id = $2`, workspaceID, id))
	if err != nil {
		return store.Provider{}, fmt.Errorf("postgres: get provider %s: %w", id, mapErr(err))
	}
	return p, nil
}

func (r providers) GetByName(ctx context.Context, workspaceID, name string) (store.Provider, error) {
	p, err := scanProvider(r.s.pool.QueryRow(ctx,
		`SELECT `+providerColumns+` FROM providers WHERE workspace_id = $1 AND name = $2`, workspaceID, name))
	if err != nil {
		return store.Provider{}, fmt.Errorf("postgres: get provider %q: %w", name, mapErr(err))
	}
	return p, nil
}

func (r providers) List(ctx context.Context, workspaceID string) ([]store.Provider, error) {
	out, err := queryList(ctx, r.s, scanProvider,
		`SELECT `+providerColumns+` FROM providers WHERE workspace_id = $1 ORDER BY name COLLATE "C"`, workspaceID)
	if err != nil {
		return nil, fmt.Errorf("postgres: list providers: %w", err)
	}
	return out, nil
}

func (r providers) Update(ctx context.Context, p store.Provider) (store.Provider, error) {
	p, settings, err := prepareProvider(p)
	if err != nil {
		return store.Provider{}, fmt.Errorf("postgres: update provider: %w", err)
	}
	got, err := scanProvider(r.s.pool.QueryRow(ctx,
		`UPDATE providers SET name = $1, type = $2, base_url = $3, settings = $4, source = $5, updated_at = $6
		WHERE workspace_id = $7 AND id = $8 RETURNING `+providerColumns,
		p.Name, p.Type, p.BaseURL, settings, p.Source, p.UpdatedAt, p.WorkspaceID, p.ID))
	if err != nil {
		return store.Provider{}, fmt.Errorf("postgres: update provider %s: %w", p.ID, mapErr(err))
	}
	return got, nil
}

func (r providers) Delete(ctx context.Context, workspaceID, id string) error {
	tag, err := r.s.pool.Exec(ctx, `DELETE FROM providers WHERE workspace_id = $1 AND id = $2`, workspaceID, id)
	if err == nil {
		err = affected(tag)
	}
	if err != nil {
		return fmt.Errorf("postgres: delete provider %s: %w", id, mapErr(err))
	}
	return nil
}

func (r providers) Upsert(ctx context.Context, p store.Provider) (store.Provider, error) {
	p, settings, err := prepareProvider(p)
	if err != nil {
		return store.Provider{}, fmt.Errorf("postgres: upsert provider: %w", err)
	}
	if p.ID == "" {
		p.ID = store.NewID()
	}
	got, err := scanProvider(r.s.pool.QueryRow(ctx,
		`INSERT INTO providers (`+providerColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (workspace_id, name) DO UPDATE SET
			type = excluded.type, base_url = excluded.base_url, settings = excluded.settings,
			source = excluded.source, updated_at = excluded.updated_at
		RETURNING `+providerColumns,
		p.ID, p.WorkspaceID, p.Name, p.Type, p.BaseURL, settings, p.Source, p.CreatedAt, p.UpdatedAt))
	if err != nil {
		return store.Provider{}, fmt.Errorf("postgres: upsert provider %q: %w", p.Name, mapErr(err))
	}
	return got, nil
}
