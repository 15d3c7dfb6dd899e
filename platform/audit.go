package platform

import (
	"context"
	"iter"

	"github.com/agentcraftlab/agentcraft/audit"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/store"
)

// RecordAudit hands e to the audit recorder. An empty WorkspaceID or Actor
// is taken from the request: the principal's workspace and API key
// ("apikey:<id>") or signed-in user ("user:<id>"), else the context's audit.Scope, else "system". The end
// user a front end names (Principal.User, often an e-mail address) is
// never the actor: the audit log holds no personal data.
func (p *Platform) RecordAudit(ctx context.Context, e store.AuditEvent) {
	if pr, ok := PrincipalFrom(ctx); ok {
		if e.WorkspaceID == "" {
			e.WorkspaceID = pr.WorkspaceID
		}
		switch {
		case e.Actor != "":
		case pr.APIKeyID != "":
			e.Actor = audit.APIKeyActor(pr.APIKeyID)
		case pr.UserID != "":
			e.Actor = "user:" + pr.UserID
		}
	}
	audit.Fill(ctx, &e)
	p.audit.Record(ctx, e)
}

// auditSafety is the middleware's audit sink (middleware.BuildOptions.Audit):
// guard and PII events of the request in ctx.
func (p *Platform) auditSafety(ctx context.Context, action string, details map[string]any) {
	p.RecordAudit(ctx, store.AuditEvent{Action: action, Details: audit.Details(details)})
}

// auditScoped names workspaceID as the audit scope of calls whose context
// names none, such as a workflow run's agent node: a provider's middleware
// is shared by every workspace and learns the workspace from the context.
func auditScoped(m llm.Model, workspaceID string) llm.Model {
	return scopedModel{next: m, workspaceID: workspaceID}
}

type scopedModel struct {
	next        llm.Model
	workspaceID string
}

func (s scopedModel) scope(ctx context.Context) context.Context {
	if _, ok := PrincipalFrom(ctx); ok {
		return ctx
	}
	if sc, ok := audit.ScopeFrom(ctx); ok && sc.WorkspaceID != "" {
		return ctx
	}
	sc, _ := audit.ScopeFrom(ctx)
	sc.WorkspaceID = s.workspaceID
	return audit.WithScope(ctx, sc)
}

func (s scopedModel) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	return s.next.Generate(s.scope(ctx), req)
}

func (s scopedModel) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	return s.next.Stream(s.scope(ctx), req)
}
