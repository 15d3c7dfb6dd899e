package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/store"
)

type credentials struct{ s *Store }

func (r credentials) Put(ctx context.Context, c store.Credential) (store.Credential, error) {
	if err := c.Validate(); err != nil {
		return store.Credential{}, fmt.Errorf("postgres: put credential: %w", err)
	}
	if c.ID == "" {
		c.ID = store.NewID()
	}
	c.Ciphertext = append([]byte(nil), c.Ciphertext...)
	c.UpdatedAt = now()
	err := r.s.pool.QueryRow(ctx,
		`INSERT INTO credentials (id, workspace_id, provider, ciphertext, key_id, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $6)
		ON CONFLICT (workspace_id, provider) DO UPDATE SET
			ciphertext = excluded.ciphertext, key_id = excluded.key_id, updated_at = excluded.updated_at
		RETURNING id, created_at`,
		c.ID, c.WorkspaceID, c.Provider, c.Ciphertext, c.KeyID, c.UpdatedAt).Scan(&c.ID, &c.CreatedAt)
	if err != nil {
		return store.Credential{}, fmt.Errorf("postgres: put credential for %q: %w", c.Provider, mapErr(err))
	}
	c.CreatedAt = c.CreatedAt.UTC()
	return c, nil
}

func (r credentials) Get(ctx context.Context, workspaceID, provider string) (store.Credential, error) {
	var c store.Credential
	err := r.s.pool.QueryRow(ctx,
		`SELECT id, workspace_id, provider, ciphertext, key_id, created_at, updated_at
		FROM credentials WHERE workspace_id = $1 AND provider = $2`, workspaceID, provider).
		Scan(&c.ID, &c.WorkspaceID, &c.Provider, &c.Ciphertext, &c.KeyID, &c.CreatedAt, &c.UpdatedAt)
	if err != nil {
		return store.Credential{}, fmt.Errorf("postgres: get credential for %q: %w", provider, mapErr(err))
	}
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	return c, nil
}

func (r credentials) List(ctx context.Context, workspaceID string) ([]store.Credential, error) {
	out, err := queryList(ctx, r.s, func(row pgx.Row) (store.Credential, error) {
		var c store.Credential
		if err := row.Scan(&c.ID, &c.WorkspaceID, &c.Provider, &c.KeyID, &c.CreatedAt, &c.UpdatedAt); err != nil {
			return store.Credential{}, err
		}
		c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
		return c, nil
	}, `SELECT id, workspace_id, provider, key_id, created_at, updated_at
		FROM credentials WHERE workspace_id = $1 ORDER BY provider COLLATE "C"`, workspaceID)
	if err != nil {
		return nil, fmt.Errorf("postgres: list credentials: %w", err)
	}
	return out, nil
}

func (r credentials) Delete(ctx context.Context, workspaceID, provider string) error {
	tag, err := r.s.pool.Exec(ctx,
		`DELETE FROM credentials WHERE workspace_id = $1 AND provider = $2`, workspaceID, provider)
	if err == nil {
		err = affected(tag)
	}
	if err != nil {
		return fmt.Errorf("postgres: delete credential for %q: %w", provider, mapErr(err))
	}
	return nil
}
