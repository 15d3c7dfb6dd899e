package postgres

import (
	"context"
	"encoding/json"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/store"
)

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

// providerArgs returns the arguments of an insert of p.
func providerArgs(p store.Provider) []any {
	return []any{p.ID, p.WorkspaceID, p.Name, p.Type, p.BaseURL, nullJSON(p.Settings), p.Source, p.CreatedAt, p.UpdatedAt}
}

func (d driver) ProviderInsert(ctx context.Context, w *store.ProviderWriteParams) (store.Provider, error) {
	got, err := scanProvider(d.s.pool.QueryRow(ctx,
		`INSERT INTO providers (`+providerColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		RETURNING `+providerColumns, providerArgs(w.Provider)...))
	return got, mapErr(err)
}

func (d driver) ProviderGet(ctx context.Context, workspaceID, id string) (store.Provider, error) {
	p, err := scanProvider(d.s.pool.QueryRow(ctx,
		`SELECT `+providerColumns+` FROM providers WHERE workspace_id = $1 AND id = $2`, workspaceID, id))
	return p, mapErr(err)
}

func (d driver) ProviderGetByName(ctx context.Context, workspaceID, name string) (store.Provider, error) {
	p, err := scanProvider(d.s.pool.QueryRow(ctx,
		`SELECT `+providerColumns+` FROM providers WHERE workspace_id = $1 AND name = $2`, workspaceID, name))
	return p, mapErr(err)
}

func (d driver) ProviderList(ctx context.Context, workspaceID string) ([]store.Provider, error) {
	return queryList(ctx, d.s, scanProvider,
		`SELECT `+providerColumns+` FROM providers WHERE workspace_id = $1 ORDER BY name COLLATE "C"`, workspaceID)
}

func (d driver) ProviderUpdate(ctx context.Context, w *store.ProviderWriteParams) (store.Provider, error) {
	p := w.Provider
	got, err := scanProvider(d.s.pool.QueryRow(ctx,
		`UPDATE providers SET name = $1, type = $2, base_url = $3, settings = $4, source = $5, updated_at = $6
		WHERE workspace_id = $7 AND id = $8 RETURNING `+providerColumns,
		p.Name, p.Type, p.BaseURL, nullJSON(p.Settings), p.Source, p.UpdatedAt, p.WorkspaceID, p.ID))
	return got, mapErr(err)
}

func (d driver) ProviderDelete(ctx context.Context, workspaceID, id string) error {
	tag, err := d.s.pool.Exec(ctx, `DELETE FROM providers WHERE workspace_id = $1 AND id = $2`, workspaceID, id)
	if err == nil {
		err = affected(tag)
	}
	return mapErr(err)
}

func (d driver) ProviderUpsert(ctx context.Context, w *store.ProviderWriteParams) (store.Provider, error) {
	got, err := scanProvider(d.s.pool.QueryRow(ctx,
		`INSERT INTO providers (`+providerColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (workspace_id, name) DO UPDATE SET
			type = excluded.type, base_url = excluded.base_url, settings = excluded.settings,
			source = excluded.source, updated_at = excluded.updated_at
		RETURNING `+providerColumns, providerArgs(w.Provider)...))
	return got, mapErr(err)
}
