package cli

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/agentcraftlab/agentcraft/cmd/agentcraft/internal/config"
	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/kb"
	"github.com/agentcraftlab/agentcraft/store"
)

// sessionSweepInterval is how often serve deletes expired sessions.
const sessionSweepInterval = time.Hour

// newIdentity returns the identity service of a process over st, with
// the session lifetimes of cfg.Auth. o carries what the caller wires
// (Audit, AuditWorkspaceID, BeforeWorkspaceDelete, Logger); it is copied.
func newIdentity(st store.Store, cfg config.Config, o identity.Options) (*identity.Service, error) {
	o.IdleTimeout, o.AbsoluteTimeout = cfg.Auth.IdleTimeout, cfg.Auth.AbsoluteTimeout
	return identity.New(st, &o)
}

// signIn is serve's sign-in: the identity service and, when providers
// are configured, OpenID Connect.
type signIn struct {
	ids  *identity.Service
	oidc *identity.OIDC
}

// openSignIn builds the sign-in of serve over the stack: audit events go
// to the platform's recorder, account events also to the default
// workspace, and deleting a workspace first drops its search indexes
// (knowledge bases, memories, remembered plans). OpenID flow cookies are
// sealed under the master key, so that any serve process opens another's.
func openSignIn(ctx context.Context, cfg config.Config, stk *stack, logger *slog.Logger) (signIn, error) {
	o := identity.Options{Audit: stk.p.RecordAudit, AuditWorkspaceID: stk.p.DefaultWorkspace().ID, Logger: logger}
	o.BeforeWorkspaceDelete = dropWorkspaceIndexes(stk)
	ids, err := newIdentity(stk.st, cfg, o)
	if err != nil {
		return signIn{}, err
	}
	si := signIn{ids: ids}
	if len(cfg.Auth.OIDC) == 0 {
		return si, nil
	}
	providers := make([]identity.OIDCProvider, 0, len(cfg.Auth.OIDC))
	for i, p := range cfg.Auth.OIDC {
		op := identity.OIDCProvider{Name: p.Name, IssuerURL: p.Issuer, ClientID: p.ClientID, ClientSecret: p.ClientSecret,
			RedirectURL: p.RedirectURL, Scopes: p.Scopes, AllowedDomains: p.AllowedDomains, Role: identity.Role(p.Role)}
		if p.Workspace != "" {
			ws, err := stk.st.Workspaces().GetByName(ctx, p.Workspace)
			if err != nil {
				return signIn{}, fmt.Errorf("auth.oidc[%d].workspace: %q: %w (create it first, or list it under workspaces:)", i, p.Workspace, err)
			}
			op.WorkspaceID = ws.ID
		}
		providers = append(providers, op)
	}
	if si.oidc, err = identity.NewOIDC(ids, providers, &identity.OIDCOptions{Box: stk.box}); err != nil {
		return signIn{}, err
	}
	return si, nil
}

// dropWorkspaceIndexes removes, before a workspace is deleted, what of it
// lives in search indexes rather than its rows: its knowledge bases, its
// memories' indexes and its remembered plans.
func dropWorkspaceIndexes(stk *stack) func(ctx context.Context, workspaceID string) error {
	var kbs func(ctx context.Context, workspaceID string) error
	if stk.knowledge != nil {
		kbs = dropKnowledgeBases(stk.knowledge)
	}
	return func(ctx context.Context, workspaceID string) error {
		if kbs != nil {
			if err := kbs(ctx, workspaceID); err != nil {
				return err
			}
		}
		if stk.memories != nil {
			if err := stk.memories.DropWorkspace(ctx, workspaceID); err != nil {
				return err
			}
		}
		if stk.plans != nil {
			return stk.plans.DropWorkspace(ctx, workspaceID)
		}
		return nil
	}
}

// dropKnowledgeBases deletes the persistent knowledge bases of a
// workspace (each search index, then its row) before the workspace is.
// Temporary bases (chat attachments) are not listed by kb; their rows go
// with the workspace.
func dropKnowledgeBases(k *kb.Service) func(ctx context.Context, workspaceID string) error {
	return func(ctx context.Context, workspaceID string) error {
		bases, err := k.List(ctx, workspaceID)
		if err != nil {
			return err
		}
		for _, b := range bases {
			if err := k.Delete(ctx, workspaceID, b.ID); err != nil {
				return err
			}
		}
		return nil
	}
}

// logSetupLink logs, on a fresh install (no users), the setup link that
// creates the first owner of workspace. base is the server's URL.
func logSetupLink(ctx context.Context, ids *identity.Service, workspace, base string, logger *slog.Logger) {
	l, ok, err := ids.SetupLink(ctx, workspace)
	switch {
	case err != nil:
		logger.Error("setup_link_failed", "workspace", workspace, "error", err,
			"fix", "create the first owner with: agentcraft users create --email EMAIL --owner")
	case ok:
		logger.Info("setup_link", "url", base+l.Path, "expires_at", l.ExpiresAt.UTC().Format(time.RFC3339), "workspace", workspace,
			"hint", "no users yet: open it to create the first owner; it works once")
	}
}

// sweepSessions starts deleting expired sessions every interval, the
// first time at once, until stop is called; stop waits for it.
func sweepSessions(ids *identity.Service, every time.Duration, logger *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			n, err := ids.Sweep(ctx)
			switch {
			case err != nil && ctx.Err() == nil:
				logger.Warn("session_sweep_failed", "error", err)
			case n > 0:
				logger.Info("sessions_swept", "count", n)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
	return func() {
		cancel()
		wg.Wait()
	}
}
