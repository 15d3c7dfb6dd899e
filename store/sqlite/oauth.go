package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/agentcraftlab/agentcraft/store"
)

const oauthClientColumns = `id, workspace_id, name, secret_hash, scopes, created_at, revoked_at`

func scanOAuthClient(sc scanner) (store.OAuthClient, error) {
	var (
		c       store.OAuthClient
		scopes  string
		created int64
		revoked sql.NullInt64
	)
	if err := sc.Scan(&c.ID, &c.WorkspaceID, &c.Name, &c.SecretHash, &scopes, &created, &revoked); err != nil {
		return store.OAuthClient{}, err
	}
	if err := json.Unmarshal([]byte(scopes), &c.Scopes); err != nil {
		return store.OAuthClient{}, fmt.Errorf("decode scopes of oauth client %s: %w", c.ID, err)
	}
	c.CreatedAt = fromMicros(created)
	c.RevokedAt = fromNullMicros(revoked)
	return c, nil
}

func (d driver) OAuthClientInsert(ctx context.Context, p *store.OAuthClientInsertParams) error {
	c := p.Client
	scopes, err := json.Marshal(c.Scopes)
	if err != nil {
		return fmt.Errorf("encode scopes: %w", err)
	}
	_, err = d.s.writer.ExecContext(ctx,
		`INSERT INTO oauth_clients (`+oauthClientColumns+`) VALUES (?, ?, ?, ?, ?, ?, NULL)`,
		c.ID, c.WorkspaceID, c.Name, c.SecretHash, string(scopes), micros(c.CreatedAt))
	return mapErr(err)
}

func (d driver) OAuthClientGet(ctx context.Context, id string) (store.OAuthClient, error) {
	c, err := scanOAuthClient(d.s.reader.QueryRowContext(ctx,
		`SELECT `+oauthClientColumns+` FROM oauth_clients WHERE id = ?`, id))
	return c, mapErr(err)
}

func (d driver) OAuthClientList(ctx context.Context, workspaceID string) ([]store.OAuthClient, error) {
	return queryList(ctx, d.s.reader, scanOAuthClient,
		`SELECT `+oauthClientColumns+` FROM oauth_clients WHERE workspace_id = ? ORDER BY created_at, id`, workspaceID)
}

func (d driver) OAuthClientRevoke(ctx context.Context, p *store.OAuthClientRevokeParams) error {
	res, err := d.s.writer.ExecContext(ctx,
		`UPDATE oauth_clients SET revoked_at = coalesce(revoked_at, ?) WHERE workspace_id = ? AND id = ?`,
		micros(p.At), p.WorkspaceID, p.ID)
	if err == nil {
		err = rowsAffected(res)
	}
	return mapErr(err)
}
