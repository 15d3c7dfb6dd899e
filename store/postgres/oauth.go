package postgres

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/store"
)

// OAuthClients implements store.Store.
func (s *Store) OAuthClients() store.OAuthClients { return oauthClients{s} }

type oauthClients struct{ s *Store }

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

func (r oauthClients) Create(ctx context.Context, c store.OAuthClient) (store.OAuthClient, error) {
	if err := c.Validate(); err != nil {
		return store.OAuthClient{}, fmt.Errorf("postgres: create oauth client: %w", err)
	}
	if c.ID == "" {
		c.ID = store.NewID()
	}
	c.SecretHash = slices.Clone(c.SecretHash)
	c.Scopes = slices.Clone(c.Scopes)
	c.CreatedAt = now()
	c.RevokedAt = nil
	_, err := r.s.pool.Exec(ctx,
		`INSERT INTO oauth_clients (`+oauthClientColumns+`) VALUES ($1, $2, $3, $4, $5, $6, NULL)`,
		c.ID, c.WorkspaceID, c.Name, c.SecretHash, c.Scopes, c.CreatedAt)
	if err != nil {
		return store.OAuthClient{}, fmt.Errorf("postgres: create oauth client %q: %w", c.Name, mapErr(err))
	}
	return c, nil
}

func (r oauthClients) Get(ctx context.Context, id string) (store.OAuthClient, error) {
	c, err := scanOAuthClient(r.s.pool.QueryRow(ctx,
		`SELECT `+oauthClientColumns+` FROM oauth_clients WHERE id = $1`, id))
	if err != nil {
		return store.OAuthClient{}, fmt.Errorf("postgres: get oauth client %s: %w", id, mapErr(err))
	}
	return c, nil
}

func (r oauthClients) List(ctx context.Context, workspaceID string) ([]store.OAuthClient, error) {
	out, err := queryList(ctx, r.s, scanOAuthClient,
		`SELECT `+oauthClientColumns+` FROM oauth_clients WHERE workspace_id = $1 ORDER BY created_at, id COLLATE "C"`, workspaceID)
	if err != nil {
		return nil, fmt.Errorf("postgres: list oauth clients: %w", err)
	}
	return out, nil
}

func (r oauthClients) Revoke(ctx context.Context, workspaceID, id string) error {
	tag, err := r.s.pool.Exec(ctx,
		`UPDATE oauth_clients SET revoked_at = COALESCE(revoked_at, $1) WHERE workspace_id = $2 AND id = $3`,
		now(), workspaceID, id)
	if err == nil {
		err = affected(tag)
	}
	if err != nil {
		return fmt.Errorf("postgres: revoke oauth client %s: %w", id, mapErr(err))
	}
	return nil
}
