package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/agentcraftlab/agentcraft/store"
)

type providers struct{ s *Store }

const providerColumns = `id, workspace_id, name, type, base_url, settings, source, created_at, updated_at`

func scanProvider(sc scanner) (store.Provider, error) {
	var (
		p                store.Provider
		settings         sql.NullString
		created, updated int64
	)
	if err := sc.Scan(&p.ID, &p.WorkspaceID, &p.Name, &p.Type, &p.BaseURL, &settings,
		&p.Source, &created, &updated); err != nil {
		return store.Provider{}, err
	}
	if settings.Valid {
		p.Settings = json.RawMessage(settings.String)
	}
	p.CreatedAt = fromMicros(created)
	p.UpdatedAt = fromMicros(updated)
	return p, nil
}

// prepareProvider validates p, stamps it and returns its settings column.
func prepareProvider(p store.Provider) (store.Provider, sql.NullString, error) {
	if err := p.Validate(); err != nil {
		return store.Provider{}, sql.NullString{}, err
	}
	var settings sql.NullString
	if len(p.Settings) > 0 {
		settings = sql.NullString{String: string(p.Settings), Valid: true}
		p.Settings = append(json.RawMessage(nil), p.Settings...)
	} else {
		p.Settings = nil
	}
	t := now()
	p.CreatedAt, p.UpdatedAt = t, t
	return p, settings, nil
}

func (r providers) Create(ctx context.Context, p store.Provider) (store.Provider, error) {
	p, settings, err := prepareProvider(p)
	if err != nil {
		return store.Provider{}, fmt.Errorf("sqlite: create provider: %w", err)
	}
	if p.ID == "" {
		p.ID = store.NewID()
	}
	_, err = r.s.writer.ExecContext(ctx,
		`INSERT INTO providers (`+providerColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		p.ID, p.WorkspaceID, p.Name, p.Type, p.BaseURL, settings, p.Source,
		micros(p.CreatedAt), micros(p.UpdatedAt))
	if err != nil {
		return store.Provider{}, fmt.Errorf("sqlite: create provider %q: %w", p.Name, mapErr(err))
	}
	return p, nil
}

func (r providers) Get(ctx context.Context, workspaceID, id string) (store.Provider, error) {
	p, err := scanProvider(r.s.reader.QueryRowContext(ctx,
		`SELECT `+providerColumns+` FROM providers WHERE workspace_id = ? AND id = ?`, workspaceID, id))
	if err != nil {
		return store.Provider{}, fmt.Errorf("sqlite: get provider %s: %w", id, mapErr(err))
	}
	return p, nil
}

func (r providers) GetByName(ctx context.Context, workspaceID, name string) (store.Provider, error) {
	p, err := scanProvider(r.s.reader.QueryRowContext(ctx,
		`SELECT `+providerColumns+` FROM providers WHERE workspace_id = ? AND name = ?`, workspaceID, name))
	if err != nil {
		return store.Provider{}, fmt.Errorf("sqlite: get provider %q: %w", name, mapErr(err))
	}
	return p, nil
}

func (r providers) List(ctx context.Context, workspaceID string) ([]store.Provider, error) {
	out, err := queryList(ctx, r.s.reader, scanProvider,
		`SELECT `+providerColumns+` FROM providers WHERE workspace_id = ? ORDER BY name`, workspaceID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list providers: %w", err)
	}
	return out, nil
}

func (r providers) Update(ctx context.Context, p store.Provider) (store.Provider, error) {
	p, settings, err := prepareProvider(p)
	if err != nil {
		return store.Provider{}, fmt.Errorf("sqlite: update provider: %w", err)
	}
	var created int64
	err = r.s.writer.QueryRowContext(ctx,
		`UPDATE providers SET name = ?, type = ?, base_url = ?, settings = ?, source = ?, updated_at = ?
		WHERE workspace_id = ? AND id = ? RETURNING created_at`,
		p.Name, p.Type, p.BaseURL, settings, p.Source, micros(p.UpdatedAt),
		p.WorkspaceID, p.ID).Scan(&created)
	if err != nil {
		return store.Provider{}, fmt.Errorf("sqlite: update provider %s: %w", p.ID, mapErr(err))
	}
	p.CreatedAt = fromMicros(created)
	return p, nil
}

func (r providers) Delete(ctx context.Context, workspaceID, id string) error {
	res, err := r.s.writer.ExecContext(ctx, `DELETE FROM providers WHERE workspace_id = ? AND id = ?`, workspaceID, id)
	if err == nil {
		err = rowsAffected(res)
	}
	if err != nil {
		return fmt.Errorf("sqlite: delete provider %s: %w", id, mapErr(err))
	}
	return nil
}

func (r providers) Upsert(ctx context.Context, p store.Provider) (store.Provider, error) {
	p, settings, err := prepareProvider(p)
	if err != nil {
		return store.Provider{}, fmt.Errorf("sqlite: upsert provider: %w", err)
	}
	if p.ID == "" {
		p.ID = store.NewID()
	}
	var created int64
	err = r.s.writer.QueryRowContext(ctx,
		`INSERT INTO providers (`+providerColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (workspace_id, name) DO UPDATE SET
			type = excluded.type, base_url = excluded.base_url, settings = excluded.settings,
			source = excluded.source, updated_at = excluded.updated_at
		RETURNING id, created_at`,
		p.ID, p.WorkspaceID, p.Name, p.Type, p.BaseURL, settings, p.Source,
		micros(p.CreatedAt), micros(p.UpdatedAt)).Scan(&p.ID, &created)
	if err != nil {
		return store.Provider{}, fmt.Errorf("sqlite: upsert provider %q: %w", p.Name, mapErr(err))
	}
	p.CreatedAt = fromMicros(created)
	return p, nil
}
