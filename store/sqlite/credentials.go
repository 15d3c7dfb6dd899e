package sqlite

import (
	"context"
	"fmt"

	"github.com/agentcraftlab/agentcraft/store"
)

type credentials struct{ s *Store }

func (r credentials) Put(ctx context.Context, c store.Credential) (store.Credential, error) {
	if err := c.Validate(); err != nil {
		return store.Credential{}, fmt.Errorf("sqlite: put credential: %w", err)
	}
	if c.ID == "" {
		c.ID = store.NewID()
	}
	c.Ciphertext = append([]byte(nil), c.Ciphertext...)
	t := now()
	var created int64
	err := r.s.writer.QueryRowContext(ctx,
		`INSERT INTO credentials (id, workspace_id, provider, ciphertext, key_id, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (workspace_id, provider) DO UPDATE SET
			ciphertext = excluded.ciphertext, key_id = excluded.key_id, updated_at = excluded.updated_at
		RETURNING id, created_at`,
		c.ID, c.WorkspaceID, c.Provider, c.Ciphertext, c.KeyID, micros(t), micros(t)).Scan(&c.ID, &created)
	if err != nil {
		return store.Credential{}, fmt.Errorf("sqlite: put credential for %q: %w", c.Provider, mapErr(err))
	}
	c.CreatedAt, c.UpdatedAt = fromMicros(created), t
	return c, nil
}

func (r credentials) Get(ctx context.Context, workspaceID, provider string) (store.Credential, error) {
	var (
		c                store.Credential
		created, updated int64
	)
	err := r.s.reader.QueryRowContext(ctx,
		`SELECT id, workspace_id, provider, ciphertext, key_id, created_at, updated_at
		FROM credentials WHERE workspace_id = ? AND provider = ?`, workspaceID, provider).
		Scan(&c.ID, &c.WorkspaceID, &c.Provider, &c.Ciphertext, &c.KeyID, &created, &updated)
	if err != nil {
		return store.Credential{}, fmt.Errorf("sqlite: get credential for %q: %w", provider, mapErr(err))
	}
	c.CreatedAt, c.UpdatedAt = fromMicros(created), fromMicros(updated)
	return c, nil
}

func (r credentials) List(ctx context.Context, workspaceID string) ([]store.Credential, error) {
	out, err := queryList(ctx, r.s.reader, func(sc scanner) (store.Credential, error) {
		var (
			c                store.Credential
			created, updated int64
		)
		if err := sc.Scan(&c.ID, &c.WorkspaceID, &c.Provider, &c.KeyID, &created, &updated); err != nil {
			return store.Credential{}, err
		}
		c.CreatedAt, c.UpdatedAt = fromMicros(created), fromMicros(updated)
		return c, nil
	}, `SELECT id, workspace_id, provider, key_id, created_at, updated_at
		FROM credentials WHERE workspace_id = ? ORDER BY provider`, workspaceID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list credentials: %w", err)
	}
	return out, nil
}

func (r credentials) Delete(ctx context.Context, workspaceID, provider string) error {
	res, err := r.s.writer.ExecContext(ctx,
		`DELETE FROM credentials WHERE workspace_id = ? AND provider = ?`, workspaceID, provider)
	if err == nil {
		err = rowsAffected(res)
	}
	if err != nil {
		return fmt.Errorf("sqlite: delete credential for %q: %w", provider, mapErr(err))
	}
	return nil
}
