package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/agentcraftlab/agentcraft/store"
)

// OAuthClients implements store.Store.
func (s *Store) OAuthClients() store.OAuthClients { return oauthClients{s} }

type oauthClients struct{ s *Store }

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

func (r oauthClients) Create(ctx context.Context, c store.OAuthClient) (store.OAuthClient, error) {
	if err := c.Validate(); err != nil {
		return store.OAuthClient{}, fmt.Errorf("sqlite: create oauth client: %w", err)
	}
	if c.ID == "" {
		c.ID = store.NewID()
	}
	c.SecretHash = slices.Clone(c.SecretHash)
	c.Scopes = slices.Clone(c.Scopes)
	c.CreatedAt = now()
	c.RevokedAt = nil
	scopes, err := json.Marshal(c.Scopes)
	if err != nil {
		return store.OAuthClient{}, fmt.Errorf("sqlite: create oauth client %q: encode scopes: %w", c.Name, err)
	}
	_, err = r.s.writer.ExecContext(ctx,
		`INSERT INTO oauth_clients (`+oauthClientColumns+`) VALUES (?, ?, ?, ?, ?, ?, NULL)`,
		c.ID, c.WorkspaceID, c.Name, c.SecretHash, string(scopes), micros(c.CreatedAt))
	if err != nil {
		return store.OAuthClient{}, fmt.Errorf("sqlite: create oauth client %q: %w", c.Name, mapErr(err))
	}
	return c, nil
}

func (r oauthClients) Get(ctx context.Context, id string) (store.OAuthClient, error) {
	c, err := scanOAuthClient(r.s.reader.QueryRowContext(ctx,
		`SELECT `+oauthClientColumns+` FROM oauth_clients WHERE id = ?`, id))
	if err != nil {
		return store.OAuthClient{}, fmt.Errorf("sqlite: get oauth client %s: %w", id, mapErr(err))
	}
	return c, nil
}

func (r oauthClients) List(ctx context.Context, workspaceID string) ([]store.OAuthClient, error) {
	out, err := queryList(ctx, r.s.reader, scanOAuthClient,
		`SELECT `+oauthClientColumns+` FROM oauth_clients WHERE workspace_id = ? ORDER BY created_at, id`, workspaceID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list oauth clients: %w", err)
	}
	return out, nil
}

func (r oauthClients) Revoke(ctx context.Context, workspaceID, id string) error {
	res, err := r.s.writer.ExecContext(ctx,
		`UPDATE oauth_clients SET revoked_at = coalesce(revoked_at, ?) WHERE workspace_id = ? AND id = ?`,
		micros(now()), workspaceID, id)
	if err == nil {
		err = rowsAffected(res)
	}
	if err != nil {
		return fmt.Errorf("sqlite: revoke oauth client %s: %w", id, mapErr(err))
	}
	return nil
}
