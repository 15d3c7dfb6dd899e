package platform

import (
	"context"

	"github.com/agentcraftlab/agentcraft/audit"
	"github.com/agentcraftlab/agentcraft/budget"
	"github.com/agentcraftlab/agentcraft/store"
)

// Budget is the workspace's monthly budget and what the month has spent.
func (p *Platform) Budget(ctx context.Context, workspaceID string) (budget.Status, error) {
	return p.budgets.Status(ctx, workspaceID)
}

// SetBudget sets the workspace's own monthly limits (zero: none), in
// place of the configuration's default, and audits it ("budget.set").
func (p *Platform) SetBudget(ctx context.Context, workspaceID string, l budget.Limits) (budget.Status, error) {
	st, err := p.budgets.Set(ctx, workspaceID, l)
	if err != nil {
		return budget.Status{}, err
	}
	p.RecordAudit(ctx, store.AuditEvent{WorkspaceID: workspaceID, Action: "budget.set", Target: "budget",
		Details: audit.Details(map[string]any{"tokens": l.Tokens, "cost": l.Cost, "currency": st.Currency})})
	return st, nil
}

// DefaultBudget drops the workspace's own limits so that the
// configuration's default applies again, and audits it ("budget.default").
func (p *Platform) DefaultBudget(ctx context.Context, workspaceID string) (budget.Status, error) {
	st, err := p.budgets.UseDefault(ctx, workspaceID)
	if err != nil {
		return budget.Status{}, err
	}
	p.RecordAudit(ctx, store.AuditEvent{WorkspaceID: workspaceID, Action: "budget.default", Target: "budget"})
	return st, nil
}

// ResetBudget starts the month's count afresh from now, so that a
// workspace refused for its spent budget runs again, and audits it
// ("budget.reset", with what the month had used).
func (p *Platform) ResetBudget(ctx context.Context, workspaceID string) (budget.Status, error) {
	before, err := p.budgets.Status(ctx, workspaceID)
	if err != nil {
		return budget.Status{}, err
	}
	st, err := p.budgets.Reset(ctx, workspaceID)
	if err != nil {
		return budget.Status{}, err
	}
	p.RecordAudit(ctx, store.AuditEvent{WorkspaceID: workspaceID, Action: "budget.reset", Target: "budget",
		Details: audit.Details(map[string]any{"month": st.Month, "used_tokens": before.Used.Tokens, "used_cost": before.Used.Cost,
			"currency": st.Currency})})
	return st, nil
}
