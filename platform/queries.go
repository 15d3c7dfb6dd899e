package platform

import (
	"context"
	"time"

	"github.com/agentcraftlab/agentcraft/store"
)

// The surfaces read what the platform owns through these, never through
// the store: usage, the audit log, credentials (names only), workspaces,
// API keys and the database's health.

// Ready checks that the database answers.
func (p *Platform) Ready(ctx context.Context) error { return p.store.Ping(ctx) }

// Usage totals the workspace's usage since since, per agent and model.
func (p *Platform) Usage(ctx context.Context, workspaceID string, since time.Time) ([]store.UsageSummary, error) {
	return p.store.Usage().Summary(ctx, workspaceID, since)
}

// UsageBy totals the workspace's usage since since per group of by (a
// day in UTC, an agent, an actor or a provider/model).
func (p *Platform) UsageBy(ctx context.Context, workspaceID string, since time.Time, by store.UsageGroup) ([]store.UsageTotal, error) {
	return p.store.Usage().SummaryBy(ctx, workspaceID, since, by)
}

// AuditLog returns a page of the audit events f selects.
func (p *Platform) AuditLog(ctx context.Context, f store.AuditFilter) (store.AuditPage, error) {
	return p.store.AuditLog().List(ctx, f)
}

// Credentials lists the workspace's stored provider credentials (sealed:
// callers show their provider and dates, never the key).
func (p *Platform) Credentials(ctx context.Context, workspaceID string) ([]store.Credential, error) {
	return p.store.Credentials().List(ctx, workspaceID)
}

// Workspace returns the workspace with id.
func (p *Platform) Workspace(ctx context.Context, id string) (store.Workspace, error) {
	return p.store.Workspaces().Get(ctx, id)
}

// WorkspaceByName returns the workspace named name.
func (p *Platform) WorkspaceByName(ctx context.Context, name string) (store.Workspace, error) {
	return p.store.Workspaces().GetByName(ctx, name)
}

// APIKeys is the API keys requests authenticate with (httpapi's
// Authenticator caches them).
func (p *Platform) APIKeys() store.APIKeys { return p.store.APIKeys() }
