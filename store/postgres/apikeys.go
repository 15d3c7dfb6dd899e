package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/store"
)

const apiKeyColumns = `id, workspace_id, name, prefix, hash, role, scope, user_id, created_at, last_used_at, revoked_at`

func scanAPIKey(row pgx.Row) (store.APIKey, error) {
	var (
		k      store.APIKey
		userID *string
	)
	if err := row.Scan(&k.ID, &k.WorkspaceID, &k.Name, &k.Prefix, &k.Hash, &k.Role, &k.Scope, &userID, &k.CreatedAt, &k.LastUsedAt, &k.RevokedAt); err != nil {
		return store.APIKey{}, err
	}
	if userID != nil {
		k.UserID = *userID
	}
	k.CreatedAt = k.CreatedAt.UTC()
	k.LastUsedAt = utc(k.LastUsedAt)
	k.RevokedAt = utc(k.RevokedAt)
	return k, nil
}

func (d driver) APIKeyInsert(ctx context.Context, p *store.APIKeyInsertParams) error {
	k := p.Key
	_, err := d.s.pool.Exec(ctx,
		`INSERT INTO api_keys (`+apiKeyColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, NULL, NULL)`,
		k.ID, k.WorkspaceID, k.Name, k.Prefix, k.Hash, string(k.Role), k.Scope, nullString(k.UserID), k.CreatedAt)
	return mapErr(err)
}

func (d driver) APIKeyGetByHash(ctx context.Context, hash []byte) (store.APIKey, error) {
	k, err := scanAPIKey(d.s.pool.QueryRow(ctx,
		`SELECT `+apiKeyColumns+` FROM api_keys WHERE hash = $1 AND revoked_at IS NULL`, hash))
	return k, mapErr(err)
}

func (d driver) APIKeyGet(ctx context.Context, workspaceID, id string) (store.APIKey, error) {
	k, err := scanAPIKey(d.s.pool.QueryRow(ctx,
		`SELECT `+apiKeyColumns+` FROM api_keys WHERE workspace_id = $1 AND id = $2`, workspaceID, id))
	return k, mapErr(err)
}

func (d driver) APIKeyList(ctx context.Context, workspaceID string) ([]store.APIKey, error) {
	return queryList(ctx, d.s, scanAPIKey,
		`SELECT `+apiKeyColumns+` FROM api_keys WHERE workspace_id = $1 ORDER BY created_at, id COLLATE "C"`, workspaceID)
}

func (d driver) APIKeyRevoke(ctx context.Context, p *store.APIKeyStampParams) error {
	tag, err := d.s.pool.Exec(ctx,
		`UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $1) WHERE workspace_id = $2 AND id = $3`,
		p.At, p.WorkspaceID, p.ID)
	if err == nil {
		err = affected(tag)
	}
	return mapErr(err)
}

func (d driver) APIKeyTouch(ctx context.Context, p *store.APIKeyStampParams) error {
	// GREATEST skips NULL, so the first touch sets the time.
	tag, err := d.s.pool.Exec(ctx,
		`UPDATE api_keys SET last_used_at = GREATEST(last_used_at, $1) WHERE workspace_id = $2 AND id = $3`,
		p.At, p.WorkspaceID, p.ID)
	if err == nil {
		err = affected(tag)
	}
	return mapErr(err)
}
