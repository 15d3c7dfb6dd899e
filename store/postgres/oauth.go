package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/store"
)

const oauthClientColumns = `id, workspace_id, name, secret_hash, scopes, created_at, revoked_at`

func scanOAuthClient(row pgx.Row) (store.OAuthClient, error) {
	var c store.OAuthClient
	if err := row.Scan(&c.ID, &c.WorkspaceID, &c.Name, &c.SecretHash, &c.Scopes, &c.CreatedAt, &c.RevokedAt); err != nil {
		return store.OAuthClient{}, err
	}
	c.CreatedAt = c.CreatedAt.UTC()
	c.RevokedAt = utc(c.RevokedAt)
	return c, nil
}

func (d driver) OAuthClientInsert(ctx context.Context, p *store.OAuthClientInsertParams) error {
	c := p.Client
	_, err := d.s.pool.Exec(ctx,
		`INSERT INTO oauth_clients (`+oauthClientColumns+`) VALUES ($1, $2, $3, $4, $5, $6, NULL)`,
		c.ID, c.WorkspaceID, c.Name, c.SecretHash, c.Scopes, c.CreatedAt)
	return mapErr(err)
}

func (d driver) OAuthClientGet(ctx context.Context, id string) (store.OAuthClient, error) {
	c, err := scanOAuthClient(d.s.pool.QueryRow(ctx,
		`SELECT `+oauthClientColumns+` FROM oauth_clients WHERE id = $1`, id))
	return c, mapErr(err)
}

func (d driver) OAuthClientList(ctx context.Context, workspaceID string) ([]store.OAuthClient, error) {
	return queryList(ctx, d.s, scanOAuthClient,
		`SELECT `+oauthClientColumns+` FROM oauth_clients WHERE workspace_id = $1 ORDER BY created_at, id COLLATE "C"`, workspaceID)
}

func (d driver) OAuthClientRevoke(ctx context.Context, p *store.OAuthClientRevokeParams) error {
	tag, err := d.s.pool.Exec(ctx,
		`UPDATE oauth_clients SET revoked_at = COALESCE(revoked_at, $1) WHERE workspace_id = $2 AND id = $3`,
		p.At, p.WorkspaceID, p.ID)
	if err == nil {
		err = affected(tag)
	}
	return mapErr(err)
}
