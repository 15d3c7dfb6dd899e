package platform

import "context"

// Principal is who a request acts for.
type Principal struct {
	WorkspaceID string
	// APIKeyID is the key that authenticated the request; empty when
	// authentication is off.
	APIKeyID string
	// User is the end user a front end names (Open WebUI's user headers).
	User string
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
