package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"

	"github.com/agentcraftlab/agentcraft/store"
)

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

// providerArgs returns the arguments of an insert of p.
func providerArgs(p store.Provider) []any {
	return []any{p.ID, p.WorkspaceID, p.Name, p.Type, p.BaseURL, nullJSON(p.Settings), p.Source,
		micros(p.CreatedAt), micros(p.UpdatedAt)}
}

// ProviderInsert returns the row it was given: SQLite stores what it is
// given.
func (d driver) ProviderInsert(ctx context.Context, w *store.ProviderWriteParams) (store.Provider, error) {
	if _, err := d.s.writer.ExecContext(ctx,
		`INSERT INTO providers (`+providerColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		providerArgs(w.Provider)...); err != nil {
		return store.Provider{}, mapErr(err)
	}
	return w.Provider, nil
}

func (d driver) ProviderGet(ctx context.Context, workspaceID, id string) (store.Provider, error) {
	p, err := scanProvider(d.s.reader.QueryRowContext(ctx,
		`SELECT `+providerColumns+` FROM providers WHERE workspace_id = ? AND id = ?`, workspaceID, id))
	return p, mapErr(err)
}

func (d driver) ProviderGetByName(ctx context.Context, workspaceID, name string) (store.Provider, error) {
	p, err := scanProvider(d.s.reader.QueryRowContext(ctx,
		`SELECT `+providerColumns+` FROM providers WHERE workspace_id = ? AND name = ?`, workspaceID, name))
	return p, mapErr(err)
}

func (d driver) ProviderList(ctx context.Context, workspaceID string) ([]store.Provider, error) {
	return queryList(ctx, d.s.reader, scanProvider,
		`SELECT `+providerColumns+` FROM providers WHERE workspace_id = ? ORDER BY name`, workspaceID)
}

func (d driver) ProviderUpdate(ctx context.Context, w *store.ProviderWriteParams) (store.Provider, error) {
	p := w.Provider
	var created int64
	err := d.s.writer.QueryRowContext(ctx,
		`UPDATE providers SET name = ?, type = ?, base_url = ?, settings = ?, source = ?, updated_at = ?
		WHERE workspace_id = ? AND id = ? RETURNING created_at`,
		p.Name, p.Type, p.BaseURL, nullJSON(p.Settings), p.Source, micros(p.UpdatedAt),
		p.WorkspaceID, p.ID).Scan(&created)
	if err != nil {
		return store.Provider{}, mapErr(err)
	}
	p.CreatedAt = fromMicros(created)
	return p, nil
}

func (d driver) ProviderDelete(ctx context.Context, workspaceID, id string) error {
	res, err := d.s.writer.ExecContext(ctx, `DELETE FROM providers WHERE workspace_id = ? AND id = ?`, workspaceID, id)
	if err == nil {
		err = rowsAffected(res)
	}
	return mapErr(err)
}

func (d driver) ProviderUpsert(ctx context.Context, w *store.ProviderWriteParams) (store.Provider, error) {
	p := w.Provider
	var created int64
	err := d.s.writer.QueryRowContext(ctx,
		`INSERT INTO providers (`+providerColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (workspace_id, name) DO UPDATE SET
			type = excluded.type, base_url = excluded.base_url, settings = excluded.settings,
			source = excluded.source, updated_at = excluded.updated_at
		RETURNING id, created_at`, providerArgs(p)...).Scan(&p.ID, &created)
	if err != nil {
		return store.Provider{}, mapErr(err)
	}
	p.CreatedAt = fromMicros(created)
	return p, nil
}
