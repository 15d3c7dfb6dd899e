package sqlite

import (
	"context"

	"github.com/agentcraftlab/agentcraft/store"
)

const openAPIImportColumns = `workspace_id, name, document, base_url, ciphertext, key_id, created_at, updated_at`

func scanOpenAPIImport(sc scanner) (store.OpenAPIImport, error) {
	var (
		i                store.OpenAPIImport
		created, updated int64
	)
	if err := sc.Scan(&i.WorkspaceID, &i.Name, &i.Document, &i.BaseURL, &i.Ciphertext, &i.KeyID, &created, &updated); err != nil {
		return store.OpenAPIImport{}, err
	}
	if len(i.Ciphertext) == 0 {
		i.Ciphertext = nil
	}
	i.CreatedAt, i.UpdatedAt = fromMicros(created), fromMicros(updated)
	return i, nil
}

func (d driver) OpenAPIImportUpsert(ctx context.Context, p *store.OpenAPIImportUpsertParams) (store.OpenAPIImport, error) {
	i := p.Import
	var created int64
	err := d.s.writer.QueryRowContext(ctx,
		`INSERT INTO openapi_imports (`+openAPIImportColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (workspace_id, name) DO UPDATE SET document = excluded.document, base_url = excluded.base_url,
			ciphertext = excluded.ciphertext, key_id = excluded.key_id, updated_at = excluded.updated_at
		RETURNING created_at`,
		i.WorkspaceID, i.Name, i.Document, i.BaseURL, i.Ciphertext, i.KeyID, micros(i.CreatedAt), micros(i.UpdatedAt)).Scan(&created)
	if err != nil {
		return store.OpenAPIImport{}, mapErr(err)
	}
	i.CreatedAt = fromMicros(created)
	return i, nil
}

func (d driver) OpenAPIImportList(ctx context.Context, workspaceID string) ([]store.OpenAPIImport, error) {
	return queryList(ctx, d.s.reader, scanOpenAPIImport,
		`SELECT `+openAPIImportColumns+` FROM openapi_imports WHERE workspace_id = ? ORDER BY name`, workspaceID)
}

func (d driver) OpenAPIImportListAll(ctx context.Context) ([]store.OpenAPIImport, error) {
	return queryList(ctx, d.s.reader, scanOpenAPIImport,
		`SELECT `+openAPIImportColumns+` FROM openapi_imports ORDER BY workspace_id, name`)
}

func (d driver) OpenAPIImportDelete(ctx context.Context, workspaceID, name string) error {
	res, err := d.s.writer.ExecContext(ctx, `DELETE FROM openapi_imports WHERE workspace_id = ? AND name = ?`, workspaceID, name)
	if err == nil {
		err = rowsAffected(res)
	}
	return mapErr(err)
}
