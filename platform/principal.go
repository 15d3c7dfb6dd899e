package platform

import (
	"context"

	"github.com/agentcraftlab/agentcraft/store"
)

// Principal is who a request acts for.
type Principal struct {
	WorkspaceID string
	// APIKeyID is the key that authenticated the request; empty when
	// authentication is off.
	APIKeyID string
	// User is the end user a front end names (Open WebUI's user headers).
	User string
	// UserID is the signed-in user, or the user an API key acts for; ""
	// when there is none (a key of its own, an OAuth client, no auth).
	UserID string
	// Role and Scope are what the credential holds in WorkspaceID: the
	// member's role for a session, the key's role (capped at its user's)
	// and scope for an API key, the owner's without authentication.
	Role  store.Role
	Scope string
}

type principalKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the request's principal.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}
