package sqlite

import (
	"context"
	"fmt"

	"github.com/agentcraftlab/agentcraft/store"
)

// OpenAPIImports implements store.Store.
func (s *Store) OpenAPIImports() store.OpenAPIImports { return openAPIImports{s} }

type openAPIImports struct{ s *Store }

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

func (r openAPIImports) Put(ctx context.Context, i store.OpenAPIImport) (store.OpenAPIImport, error) {
	if err := i.Validate(); err != nil {
		return store.OpenAPIImport{}, fmt.Errorf("sqlite: put openapi import: %w", err)
	}
	i.Ciphertext = append([]byte(nil), i.Ciphertext...)
	if len(i.Ciphertext) == 0 {
		i.Ciphertext = nil
	}
	i.UpdatedAt = now()
	var created int64
	err := r.s.writer.QueryRowContext(ctx,
		`INSERT INTO openapi_imports (`+openAPIImportColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (workspace_id, name) DO UPDATE SET document = excluded.document, base_url = excluded.base_url,
			ciphertext = excluded.ciphertext, key_id = excluded.key_id, updated_at = excluded.updated_at
		RETURNING created_at`,
		i.WorkspaceID, i.Name, i.Document, i.BaseURL, i.Ciphertext, i.KeyID, micros(i.UpdatedAt), micros(i.UpdatedAt)).Scan(&created)
	if err != nil {
		return store.OpenAPIImport{}, fmt.Errorf("sqlite: put openapi import %q: %w", i.Name, mapErr(err))
	}
	i.CreatedAt = fromMicros(created)
	return i, nil
}

func (r openAPIImports) List(ctx context.Context, workspaceID string) ([]store.OpenAPIImport, error) {
	out, err := queryList(ctx, r.s.reader, scanOpenAPIImport,
		`SELECT `+openAPIImportColumns+` FROM openapi_imports WHERE workspace_id = ? ORDER BY name`, workspaceID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list openapi imports: %w", err)
	}
	return out, nil
}

func (r openAPIImports) ListAll(ctx context.Context) ([]store.OpenAPIImport, error) {
	out, err := queryList(ctx, r.s.reader, scanOpenAPIImport,
		`SELECT `+openAPIImportColumns+` FROM openapi_imports ORDER BY workspace_id, name`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list all openapi imports: %w", err)
	}
	return out, nil
}

func (r openAPIImports) Delete(ctx context.Context, workspaceID, name string) error {
	res, err := r.s.writer.ExecContext(ctx, `DELETE FROM openapi_imports WHERE workspace_id = ? AND name = ?`, workspaceID, name)
	if err == nil {
		err = rowsAffected(res)
	}
	if err != nil {
		return fmt.Errorf("sqlite: delete openapi import %q: %w", name, mapErr(err))
	}
	return nil
}
