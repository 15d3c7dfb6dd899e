package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/store"
)

func (d driver) CredentialUpsert(ctx context.Context, p *store.CredentialUpsertParams) (store.Credential, error) {
	c := p.Credential
	err := d.s.pool.QueryRow(ctx,
		`INSERT INTO credentials (id, workspace_id, provider, ciphertext, key_id, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (workspace_id, provider) DO UPDATE SET
			ciphertext = excluded.ciphertext, key_id = excluded.key_id, updated_at = excluded.updated_at
		RETURNING id, created_at`,
		c.ID, c.WorkspaceID, c.Provider, c.Ciphertext, c.KeyID, c.CreatedAt, c.UpdatedAt).Scan(&c.ID, &c.CreatedAt)
	if err != nil {
		return store.Credential{}, mapErr(err)
	}
	c.CreatedAt = c.CreatedAt.UTC()
	return c, nil
}

func (d driver) CredentialGet(ctx context.Context, workspaceID, provider string) (store.Credential, error) {
	var c store.Credential
	err := d.s.pool.QueryRow(ctx,
		`SELECT id, workspace_id, provider, ciphertext, key_id, created_at, updated_at
		FROM credentials WHERE workspace_id = $1 AND provider = $2`, workspaceID, provider).
		Scan(&c.ID, &c.WorkspaceID, &c.Provider, &c.Ciphertext, &c.KeyID, &c.CreatedAt, &c.UpdatedAt)
	if err != nil {
		return store.Credential{}, mapErr(err)
	}
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	return c, nil
}

func (d driver) CredentialList(ctx context.Context, workspaceID string) ([]store.Credential, error) {
	return queryList(ctx, d.s, func(row pgx.Row) (store.Credential, error) {
		var c store.Credential
		if err := row.Scan(&c.ID, &c.WorkspaceID, &c.Provider, &c.KeyID, &c.CreatedAt, &c.UpdatedAt); err != nil {
			return store.Credential{}, err
		}
		c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
		return c, nil
	}, `SELECT id, workspace_id, provider, key_id, created_at, updated_at
		FROM credentials WHERE workspace_id = $1 ORDER BY provider COLLATE "C"`, workspaceID)
}

func (d driver) CredentialDelete(ctx context.Context, workspaceID, provider string) error {
	tag, err := d.s.pool.Exec(ctx,
		`DELETE FROM credentials WHERE workspace_id = $1 AND provider = $2`, workspaceID, provider)
	if err == nil {
		err = affected(tag)
	}
	return mapErr(err)
}
