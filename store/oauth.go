package store

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"time"
)

// OAuthClient is a machine client of AgentCraft's own OAuth2 authorization
// server: it trades its id and secret for short-lived bearer tokens at
// POST /oauth/token (client-credentials grant) and calls /mcp with them.
// The store keeps only the SHA-256 of the secret; the secret itself is
// shown to the user once.
type OAuthClient struct {
	// ID is the OAuth client_id.
	ID          string `json:"id"`
	WorkspaceID string `json:"workspace_id"`
	Name        string `json:"name"`
	// SecretHash is the SHA-256 of the whole client secret.
	SecretHash []byte `json:"-"`
	// Scopes are the most a token of this client may carry, such as
	// "docsearch/read" or "agents/*".
	Scopes    []string   `json:"scopes"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
}

// Validate reports whether c can be written.
func (c OAuthClient) Validate() error {
	switch {
	case c.WorkspaceID == "":
		return fmt.Errorf("%w: oauth client workspace id is empty; set OAuthClient.WorkspaceID", ErrInvalid)
	case strings.TrimSpace(c.Name) == "":
		return fmt.Errorf("%w: oauth client name is empty; name the client (--name)", ErrInvalid)
	case len(c.SecretHash) != sha256.Size:
		// A wrong length most likely means the caller passed the secret
		// itself, which must never be stored.
		return fmt.Errorf("%w: oauth client secret hash is %d bytes; set OAuthClient.SecretHash to the SHA-256 (%d bytes) of the secret",
			ErrInvalid, len(c.SecretHash), sha256.Size)
	case len(c.Scopes) == 0:
		return fmt.Errorf("%w: oauth client %q has no scopes; grant at least one (--scopes \"docsearch/read docsearch/search\")", ErrInvalid, c.Name)
	}
	for _, s := range c.Scopes {
		if s == "" || strings.ContainsAny(s, " \t\r\n\"\\") {
			return fmt.Errorf("%w: oauth client %q scope %q is empty or holds a space, quote or backslash", ErrInvalid, c.Name, s)
		}
	}
	return nil
}

// OAuthClients stores OAuth clients.
type OAuthClients interface {
	// Create inserts c and returns it as stored. It assigns an ID when
	// c.ID is empty and stamps CreatedAt; RevokedAt starts nil. An unknown
	// workspace gives ErrNotFound; a secret hash already stored
	// ErrConflict.
	Create(ctx context.Context, c OAuthClient) (OAuthClient, error)
	// Get returns the client with id in whatever workspace it is, revoked
	// or not, or ErrNotFound. Like APIKeys.GetByHash it is how the token
	// endpoint finds the workspace of a request.
	Get(ctx context.Context, id string) (OAuthClient, error)
	// List returns the workspace's clients, revoked ones included, oldest
	// first.
	List(ctx context.Context, workspaceID string) ([]OAuthClient, error)
	// Revoke marks the client revoked now. Revoking a revoked client keeps
	// the first revocation time and succeeds; an unknown client (or one of
	// another workspace) gives ErrNotFound.
	Revoke(ctx context.Context, workspaceID, id string) error
}
