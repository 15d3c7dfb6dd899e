// Package store is AgentCraft's persistence seam: the rows the platform keeps,
// one interface per aggregate, and the errors every driver returns.
//
// A Store bundles the aggregates (workspaces, API keys, agents, providers,
// credentials, usage, workflows with their versions, and workflow runs with
// their checkpoints and events, the audit log, knowledge bases with their
// ingest jobs, uploads, the OAuth clients of /mcp, per-workspace tool
// settings, the MCP servers added through the API, the imported OpenAPI
// documents, and the people: users with their external identities,
// workspace members and roles, browser sessions, invitations and one-time
// sign-in links; conversations with their messages and memory items; tasks
// with their events, approvals, the steps of their evidence ledger and
// the outbox of notifications; skills with their resource files; the
// registry of the processes that execute runs; triggers with the ticks
// they fired and the webhook deliveries they took). Two
// drivers implement it: store/sqlite for a single machine and
// store/postgres for several; store/storetest is the conformance suite both
// must pass. Open a driver, run its migrations, then use it:
//
//	st, err := sqlite.Open(ctx, "data/agentcraft.db", nil)
//	if err != nil { ... }
//	defer st.Close()
//	if err := st.Migrate(ctx); err != nil { ... }
//	ws, err := st.Workspaces().GetOrCreate(ctx, "default")
//
// Every query on a workspace-scoped row takes the workspace id and filters by
// it, so a row of one workspace is invisible from another: asking workspace B
// for an id that belongs to workspace A gives ErrNotFound, never the row. The
// one exception is APIKeys.GetByHash, which is how a request finds its
// workspace in the first place.
//
// Core, which every driver embeds, validates rows, assigns an ID (NewID) to
// a row created without one and stamps CreatedAt/UpdatedAt; a driver only
// runs the SQL verbs of Driver. Timestamps come back in UTC, truncated to
// the microsecond, which is what both databases keep. Errors wrap
// ErrNotFound, ErrConflict and ErrInvalid; test with errors.Is.
//
// The store never sees a credential in clear: Credential.Ciphertext is sealed
// by package secret before it gets here.
package store

import (
	"context"
	"errors"
)

// Errors returned by every driver, wrapped with the operation that failed.
var (
	// ErrNotFound means the row does not exist in the given workspace, or
	// that the workspace a new row refers to does not exist.
	ErrNotFound = errors.New("store: not found")
	// ErrConflict means a unique constraint refused the write, such as a
	// second agent with the same name in one workspace.
	ErrConflict = errors.New("store: conflict")
	// ErrInvalid means a row failed validation before reaching the
	// database; the message names the field and the fix.
	ErrInvalid = errors.New("store: invalid input")
)

// Store is a database holding every aggregate of the platform.
// Implementations are safe for concurrent use.
type Store interface {
	Workspaces() Workspaces
	APIKeys() APIKeys
	Agents() Agents
	Providers() Providers
	Credentials() Credentials
	Usage() Usage
	Budgets() Budgets
	Workflows() Workflows
	Runs() Runs
	AuditLog() AuditLog
	KnowledgeBases() KnowledgeBases
	IngestJobs() IngestJobs
	Uploads() Uploads
	OAuthClients() OAuthClients
	ToolSettings() ToolSettings
	MCPServers() MCPServers
	OpenAPIImports() OpenAPIImports
	Users() Users
	UserIdentities() UserIdentities
	Members() Members
	Sessions() Sessions
	Invitations() Invitations
	SignInLinks() SignInLinks
	Conversations() Conversations
	Memories() Memories
	Tasks() Tasks
	Approvals() Approvals
	Steps() Steps
	Notifications() Notifications
	Skills() Skills
	Workers() Workers
	Triggers() Triggers

	// Ping checks that the database answers.
	Ping(ctx context.Context) error
	// Migrate brings the schema to the version this binary expects. It is
	// idempotent: with nothing pending it changes nothing. Both
	// `agentcraft migrate` and `agentcraft serve` call it after opening.
	Migrate(ctx context.Context) error
	// Close releases the database. Calling methods after Close is an error.
	Close() error
}
