package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/store"
)

// OpenAPIImports implements store.Store.
func (s *Store) OpenAPIImports() store.OpenAPIImports { return openAPIImports{s} }

type openAPIImports struct{ s *Store }

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

func (r openAPIImports) Put(ctx context.Context, i store.OpenAPIImport) (store.OpenAPIImport, error) {
	if err := i.Validate(); err != nil {
		return store.OpenAPIImport{}, fmt.Errorf("postgres: put openapi import: %w", err)
	}
	i.Ciphertext = append([]byte(nil), i.Ciphertext...)
	if len(i.Ciphertext) == 0 {
		i.Ciphertext = nil
	}
	i.UpdatedAt = now()
	err := r.s.pool.QueryRow(ctx,
		`INSERT INTO openapi_imports (`+openAPIImportColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (workspace_id, name) DO UPDATE SET document = excluded.document, base_url = excluded.base_url,
			ciphertext = excluded.ciphertext, key_id = excluded.key_id, updated_at = excluded.updated_at
		RETURNING created_at`,
		i.WorkspaceID, i.Name, i.Document, i.BaseURL, i.Ciphertext, i.KeyID, i.UpdatedAt, i.UpdatedAt).Scan(&i.CreatedAt)
	if err != nil {
		return store.OpenAPIImport{}, fmt.Errorf("postgres: put openapi import %q: %w", i.Name, mapErr(err))
	}
	i.CreatedAt = i.CreatedAt.UTC()
	return i, nil
}

func (r openAPIImports) List(ctx context.Context, workspaceID string) ([]store.OpenAPIImport, error) {
	out, err := queryList(ctx, r.s, scanOpenAPIImport,
		`SELECT `+openAPIImportColumns+` FROM openapi_imports WHERE workspace_id = $1 ORDER BY name COLLATE "C"`, workspaceID)
	if err != nil {
		return nil, fmt.Errorf("postgres: list openapi imports: %w", err)
	}
	return out, nil
}

func (r openAPIImports) ListAll(ctx context.Context) ([]store.OpenAPIImport, error) {
	out, err := queryList(ctx, r.s, scanOpenAPIImport,
		`SELECT `+openAPIImportColumns+` FROM openapi_imports ORDER BY workspace_id COLLATE "C", name COLLATE "C"`)
	if err != nil {
		return nil, fmt.Errorf("postgres: list all openapi imports: %w", err)
	}
	return out, nil
}

func (r openAPIImports) Delete(ctx context.Context, workspaceID, name string) error {
	tag, err := r.s.pool.Exec(ctx, `DELETE FROM openapi_imports WHERE workspace_id = $1 AND name = $2`, workspaceID, name)
	if err == nil {
		err = affected(tag)
	}
	if err != nil {
		return fmt.Errorf("postgres: delete openapi import %q: %w", name, mapErr(err))
	}
	return nil
}
