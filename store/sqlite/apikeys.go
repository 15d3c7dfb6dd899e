package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/agentcraftlab/agentcraft/store"
)

type apiKeys struct{ s *Store }

const apiKeyColumns = `id, workspace_id, name, prefix, hash, created_at, last_used_at, revoked_at`

func scanAPIKey(sc scanner) (store.APIKey, error) {
	var (
		k               store.APIKey
		created         int64
		lastUsed, revok sql.NullInt64
	)
	if err := sc.Scan(&k.ID, &k.WorkspaceID, &k.Name, &k.Prefix, &k.Hash, &created, &lastUsed, &revok); err != nil {
		return store.APIKey{}, err
	}
	k.CreatedAt = fromMicros(created)
	k.LastUsedAt = fromNullMicros(lastUsed)
	k.RevokedAt = fromNullMicros(revok)
	return k, nil
}

func (r apiKeys) Create(ctx context.Context, k store.APIKey) (store.APIKey, error) {
	if err := k.Validate(); err != nil {
		return store.APIKey{}, fmt.Errorf("sqlite: create api key: %w", err)
	}
	if k.ID == "" {
		k.ID = store.NewID()
	}
	k.Hash = append([]byte(nil), k.Hash...)
	k.CreatedAt = now()
	k.LastUsedAt, k.RevokedAt = nil, nil
	_, err := r.s.writer.ExecContext(ctx,
		`INSERT INTO api_keys (`+apiKeyColumns+`) VALUES (?, ?, ?, ?, ?, ?, NULL, NULL)`,
		k.ID, k.WorkspaceID, k.Name, k.Prefix, k.Hash, micros(k.CreatedAt))
	if err != nil {
		return store.APIKey{}, fmt.Errorf("sqlite: create api key %q: %w", k.Name, mapErr(err))
	}
	return k, nil
}

const queryKeyByHash = `SELECT ` + apiKeyColumns + ` FROM api_keys WHERE hash = ? AND revoked_at IS NULL`

func (r apiKeys) GetByHash(ctx context.Context, hash []byte) (store.APIKey, error) {
	stmt, err := r.s.keyByHashStmt(ctx)
	if err != nil {
		return store.APIKey{}, fmt.Errorf("sqlite: get api key by hash: prepare: %w", err)
	}
	k, err := scanAPIKey(stmt.QueryRowContext(ctx, hash))
	if err != nil {
		// Never put the hash in the message: it identifies a live key.
		return store.APIKey{}, fmt.Errorf("sqlite: get api key by hash: %w", mapErr(err))
	}
	return k, nil
}

func (r apiKeys) Get(ctx context.Context, workspaceID, id string) (store.APIKey, error) {
	k, err := scanAPIKey(r.s.reader.QueryRowContext(ctx,
		`SELECT `+apiKeyColumns+` FROM api_keys WHERE workspace_id = ? AND id = ?`, workspaceID, id))
	if err != nil {
		return store.APIKey{}, fmt.Errorf("sqlite: get api key %s: %w", id, mapErr(err))
	}
	return k, nil
}

func (r apiKeys) List(ctx context.Context, workspaceID string) ([]store.APIKey, error) {
	out, err := queryList(ctx, r.s.reader, scanAPIKey,
		`SELECT `+apiKeyColumns+` FROM api_keys WHERE workspace_id = ? ORDER BY created_at, id`, workspaceID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list api keys: %w", err)
	}
	return out, nil
}

func (r apiKeys) Revoke(ctx context.Context, workspaceID, id string) error {
	res, err := r.s.writer.ExecContext(ctx,
		`UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?) WHERE workspace_id = ? AND id = ?`,
		micros(now()), workspaceID, id)
	if err == nil {
		err = rowsAffected(res)
	}
	if err != nil {
		return fmt.Errorf("sqlite: revoke api key %s: %w", id, mapErr(err))
	}
	return nil
}

func (r apiKeys) Touch(ctx context.Context, workspaceID, id string, at time.Time) error {
	// max() keeps LastUsedAt from moving backwards when requests finish
	// out of order; SQLite counts the row as changed either way, so an
	// existing key never reads as not found.
	res, err := r.s.writer.ExecContext(ctx,
		`UPDATE api_keys SET last_used_at = max(coalesce(last_used_at, ?1), ?1) WHERE workspace_id = ?2 AND id = ?3`,
		micros(store.Timestamp(at)), workspaceID, id)
	if err == nil {
		err = rowsAffected(res)
	}
	if err != nil {
		return fmt.Errorf("sqlite: touch api key %s: %w", id, mapErr(err))
	}
	return nil
}
