package audit

import (
	"cmp"
	"context"

	"github.com/agentcraftlab/agentcraft/store"
)

// Actors that are not API keys.
const (
	// ActorCLI is a command run on the server's machine.
	ActorCLI = "cli"
	// ActorSystem is the platform acting on its own, such as loading the
	// configuration file, or a request made without authentication.
	ActorSystem = "system"
)

// APIKeyActor names the API key with the given id as an actor.
func APIKeyActor(id string) string { return "apikey:" + id }

// Scope is the workspace and actor a context acts for. Packages that
// cannot see the request's principal (middleware, background jobs) read it
// from the context to fill in events.
type Scope struct {
	WorkspaceID string
	// Actor is who acts: APIKeyActor(id), ActorCLI, ActorSystem.
	Actor string
}

type scopeKey struct{}

// WithScope returns ctx carrying s.
func WithScope(ctx context.Context, s Scope) context.Context {
	return context.WithValue(ctx, scopeKey{}, s)
}

// ScopeFrom returns the scope ctx carries.
func ScopeFrom(ctx context.Context) (Scope, bool) {
	s, ok := ctx.Value(scopeKey{}).(Scope)
	return s, ok
}

// Fill completes e from ctx: an empty WorkspaceID or Actor is taken from
// the context's scope, and an actor still unknown is ActorSystem.
func Fill(ctx context.Context, e *store.AuditEvent) {
	s, _ := ScopeFrom(ctx)
	if e.WorkspaceID == "" {
		e.WorkspaceID = s.WorkspaceID
	}
	if e.Actor == "" {
		e.Actor = cmp.Or(s.Actor, ActorSystem)
	}
}
