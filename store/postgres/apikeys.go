package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/store"
)

type apiKeys struct{ s *Store }

const apiKeyColumns = `id, workspace_id, name, prefix, hash, created_at, last_used_at, revoked_at`

func scanAPIKey(row pgx.Row) (store.APIKey, error) {
	var k store.APIKey
	if err := row.Scan(&k.ID, &k.WorkspaceID, &k.Name, &k.Prefix, &k.Hash, &k.CreatedAt, &k.LastUsedAt, &k.RevokedAt); err != nil {
		return store.APIKey{}, err
	}
	k.CreatedAt = k.CreatedAt.UTC()
	k.LastUsedAt = utc(k.LastUsedAt)
	k.RevokedAt = utc(k.RevokedAt)
	return k, nil
}

func (r apiKeys) Create(ctx context.Context, k store.APIKey) (store.APIKey, error) {
	if err := k.Validate(); err != nil {
		return store.APIKey{}, fmt.Errorf("postgres: create api key: %w", err)
	}
	if k.ID == "" {
		k.ID = store.NewID()
	}
	k.Hash = append([]byte(nil), k.Hash...)
	k.CreatedAt = now()
	k.LastUsedAt, k.RevokedAt = nil, nil
	_, err := r.s.pool.Exec(ctx,
		`INSERT INTO api_keys (`+apiKeyColumns+`) VALUES ($1, $2, $3, $4, $5, $6, NULL, NULL)`,
		k.ID, k.WorkspaceID, k.Name, k.Prefix, k.Hash, k.CreatedAt)
	if err != nil {
		return store.APIKey{}, fmt.Errorf("postgres: create api key %q: %w", k.Name, mapErr(err))
	}
	return k, nil
}

func (r apiKeys) GetByHash(ctx context.Context, hash []byte) (store.APIKey, error) {
	k, err := scanAPIKey(r.s.pool.QueryRow(ctx,
		`SELECT `+apiKeyColumns+` FROM api_keys WHERE hash = $1 AND revoked_at IS NULL`, hash))
	if err != nil {
		// Never put the hash in the message: it identifies a live key.
		return store.APIKey{}, fmt.Errorf("postgres: get api key by hash: %w", mapErr(err))
	}
	return k, nil
}

func (r apiKeys) Get(ctx context.Context, workspaceID, id string) (store.APIKey, error) {
	k, err := scanAPIKey(r.s.pool.QueryRow(ctx,
		`SELECT `+apiKeyColumns+` FROM api_keys WHERE workspace_id = $1 AND id = $2`, workspaceID, id))
	if err != nil {
		return store.APIKey{}, fmt.Errorf("postgres: get api key %s: %w", id, mapErr(err))
	}
	return k, nil
}

func (r apiKeys) List(ctx context.Context, workspaceID string) ([]store.APIKey, error) {
	out, err := queryList(ctx, r.s, scanAPIKey,
		`SELECT `+apiKeyColumns+` FROM api_keys WHERE workspace_id = $1 ORDER BY created_at, id COLLATE "C"`, workspaceID)
	if err != nil {
		return nil, fmt.Errorf("postgres: list api keys: %w", err)
	}
	return out, nil
}

func (r apiKeys) Revoke(ctx context.Context, workspaceID, id string) error {
	tag, err := r.s.pool.Exec(ctx,
		`UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $1) WHERE workspace_id = $2 AND id = $3`,
		now(), workspaceID, id)
	if err == nil {
		err = affected(tag)
	}
	if err != nil {
		return fmt.Errorf("postgres: revoke api key %s: %w", id, mapErr(err))
	}
	return nil
}

func (r apiKeys) Touch(ctx context.Context, workspaceID, id string, at time.Time) error {
	// GREATEST (which skips NULL) keeps LastUsedAt from moving backwards
	// when requests finish out of order.
	tag, err := r.s.pool.Exec(ctx,
		`UPDATE api_keys SET last_used_at = GREATEST(last_used_at, $1) WHERE workspace_id = $2 AND id = $3`,
		store.Timestamp(at), workspaceID, id)
	if err == nil {
		err = affected(tag)
	}
	if err != nil {
		return fmt.Errorf("postgres: touch api key %s: %w", id, mapErr(err))
	}
	return nil
}
