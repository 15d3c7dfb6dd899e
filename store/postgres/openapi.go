package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/store"
)

const openAPIImportColumns = `workspace_id, name, document, base_url, ciphertext, key_id, created_at, updated_at`

func scanOpenAPIImport(row pgx.Row) (store.OpenAPIImport, error) {
	var i store.OpenAPIImport
	if err := row.Scan(&i.WorkspaceID, &i.Name, &i.Document, &i.BaseURL, &i.Ciphertext, &i.KeyID, &i.CreatedAt, &i.UpdatedAt); err != nil {
		return store.OpenAPIImport{}, err
	}
	if len(i.Ciphertext) == 0 {
		i.Ciphertext = nil
	}
	i.CreatedAt, i.UpdatedAt = i.CreatedAt.UTC(), i.UpdatedAt.UTC()
	return i, nil
}

func (d driver) OpenAPIImportUpsert(ctx context.Context, p *store.OpenAPIImportUpsertParams) (store.OpenAPIImport, error) {
	i := p.Import
	err := d.s.pool.QueryRow(ctx,
		`INSERT INTO openapi_imports (`+openAPIImportColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (workspace_id, name) DO UPDATE SET document = excluded.document, base_url = excluded.base_url,
			ciphertext = excluded.ciphertext, key_id = excluded.key_id, updated_at = excluded.updated_at
		RETURNING created_at`,
		i.WorkspaceID, i.Name, i.Document, i.BaseURL, i.Ciphertext, i.KeyID, i.CreatedAt, i.UpdatedAt).Scan(&i.CreatedAt)
	if err != nil {
		return store.OpenAPIImport{}, mapErr(err)
	}
	i.CreatedAt = i.CreatedAt.UTC()
	return i, nil
}

func (d driver) OpenAPIImportList(ctx context.Context, workspaceID string) ([]store.OpenAPIImport, error) {
	return queryList(ctx, d.s, scanOpenAPIImport,
		`SELECT `+openAPIImportColumns+` FROM openapi_imports WHERE workspace_id = $1 ORDER BY name COLLATE "C"`, workspaceID)
}

func (d driver) OpenAPIImportListAll(ctx context.Context) ([]store.OpenAPIImport, error) {
	return queryList(ctx, d.s, scanOpenAPIImport,
		`SELECT `+openAPIImportColumns+` FROM openapi_imports ORDER BY workspace_id COLLATE "C", name COLLATE "C"`)
}

func (d driver) OpenAPIImportDelete(ctx context.Context, workspaceID, name string) error {
	tag, err := d.s.pool.Exec(ctx, `DELETE FROM openapi_imports WHERE workspace_id = $1 AND name = $2`, workspaceID, name)
	if err == nil {
		err = affected(tag)
	}
	return mapErr(err)
}
