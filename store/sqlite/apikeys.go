package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/agentcraftlab/agentcraft/store"
)

const apiKeyColumns = `id, workspace_id, name, prefix, hash, role, scope, user_id, created_at, last_used_at, revoked_at`

func scanAPIKey(sc scanner) (store.APIKey, error) {
	var (
		k               store.APIKey
		created         int64
		lastUsed, revok sql.NullInt64
		userID          sql.NullString
	)
	if err := sc.Scan(&k.ID, &k.WorkspaceID, &k.Name, &k.Prefix, &k.Hash, &k.Role, &k.Scope, &userID, &created, &lastUsed, &revok); err != nil {
		return store.APIKey{}, err
	}
	k.UserID = userID.String
	k.CreatedAt = fromMicros(created)
	k.LastUsedAt = fromNullMicros(lastUsed)
	k.RevokedAt = fromNullMicros(revok)
	return k, nil
}

func (d driver) APIKeyInsert(ctx context.Context, p *store.APIKeyInsertParams) error {
	k := p.Key
	_, err := d.s.writer.ExecContext(ctx,
		`INSERT INTO api_keys (`+apiKeyColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL)`,
		k.ID, k.WorkspaceID, k.Name, k.Prefix, k.Hash, string(k.Role), k.Scope, nullString(k.UserID), micros(k.CreatedAt))
	return mapErr(err)
}

const queryKeyByHash = `SELECT ` + apiKeyColumns + ` FROM api_keys WHERE hash = ? AND revoked_at IS NULL`

// APIKeyGetByHash runs a statement prepared once; see Store.readStmts.
func (d driver) APIKeyGetByHash(ctx context.Context, hash []byte) (store.APIKey, error) {
	stmt, err := d.s.keyByHashStmt(ctx)
	if err != nil {
		return store.APIKey{}, fmt.Errorf("prepare: %w", err)
	}
	k, err := scanAPIKey(stmt.QueryRowContext(ctx, hash))
	return k, mapErr(err)
}

func (d driver) APIKeyGet(ctx context.Context, workspaceID, id string) (store.APIKey, error) {
	k, err := scanAPIKey(d.s.reader.QueryRowContext(ctx,
		`SELECT `+apiKeyColumns+` FROM api_keys WHERE workspace_id = ? AND id = ?`, workspaceID, id))
	return k, mapErr(err)
}

func (d driver) APIKeyList(ctx context.Context, workspaceID string) ([]store.APIKey, error) {
	return queryList(ctx, d.s.reader, scanAPIKey,
		`SELECT `+apiKeyColumns+` FROM api_keys WHERE workspace_id = ? ORDER BY created_at, id`, workspaceID)
}

func (d driver) APIKeyRevoke(ctx context.Context, p *store.APIKeyStampParams) error {
	res, err := d.s.writer.ExecContext(ctx,
		`UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?) WHERE workspace_id = ? AND id = ?`,
		micros(p.At), p.WorkspaceID, p.ID)
	if err == nil {
		err = rowsAffected(res)
	}
	return mapErr(err)
}

func (d driver) APIKeyTouch(ctx context.Context, p *store.APIKeyStampParams) error {
	// SQLite counts the row as changed even when max() keeps the old
	// value, so an existing key never reads as not found.
	res, err := d.s.writer.ExecContext(ctx,
		`UPDATE api_keys SET last_used_at = max(coalesce(last_used_at, ?1), ?1) WHERE workspace_id = ?2 AND id = ?3`,
		micros(p.At), p.WorkspaceID, p.ID)
	if err == nil {
		err = rowsAffected(res)
	}
	return mapErr(err)
}
