package sqlite

import (
	"context"

	"github.com/agentcraftlab/agentcraft/store"
)

func (d driver) CredentialUpsert(ctx context.Context, p *store.CredentialUpsertParams) (store.Credential, error) {
	c := p.Credential
	var created int64
	err := d.s.writer.QueryRowContext(ctx,
		`INSERT INTO credentials (id, workspace_id, provider, ciphertext, key_id, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (workspace_id, provider) DO UPDATE SET
			ciphertext = excluded.ciphertext, key_id = excluded.key_id, updated_at = excluded.updated_at
		RETURNING id, created_at`,
		c.ID, c.WorkspaceID, c.Provider, c.Ciphertext, c.KeyID, micros(c.CreatedAt), micros(c.UpdatedAt)).Scan(&c.ID, &created)
	if err != nil {
		return store.Credential{}, mapErr(err)
	}
	c.CreatedAt = fromMicros(created)
	return c, nil
}

func (d driver) CredentialGet(ctx context.Context, workspaceID, provider string) (store.Credential, error) {
	var (
		c                store.Credential
		created, updated int64
	)
	err := d.s.reader.QueryRowContext(ctx,
		`SELECT id, workspace_id, provider, ciphertext, key_id, created_at, updated_at
		FROM credentials WHERE workspace_id = ? AND provider = ?`, workspaceID, provider).
		Scan(&c.ID, &c.WorkspaceID, &c.Provider, &c.Ciphertext, &c.KeyID, &created, &updated)
	if err != nil {
		return store.Credential{}, mapErr(err)
	}
	c.CreatedAt, c.UpdatedAt = fromMicros(created), fromMicros(updated)
	return c, nil
}

func (d driver) CredentialList(ctx context.Context, workspaceID string) ([]store.Credential, error) {
	return queryList(ctx, d.s.reader, func(sc scanner) (store.Credential, error) {
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
}

func (d driver) CredentialDelete(ctx context.Context, workspaceID, provider string) error {
	res, err := d.s.writer.ExecContext(ctx,
		`DELETE FROM credentials WHERE workspace_id = ? AND provider = ?`, workspaceID, provider)
	if err == nil {
		err = rowsAffected(res)
	}
	return mapErr(err)
}
