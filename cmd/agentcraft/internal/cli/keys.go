package cli

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentcraftlab/agentcraft/audit"
	"github.com/agentcraftlab/agentcraft/cmd/agentcraft/internal/config"
	"github.com/agentcraftlab/agentcraft/store"
)

// keyPrefix starts every API key, so a leaked key is recognisable by
// secret scanners.
const keyPrefix = "ac_"

// newAPIKey returns a fresh key: the prefix and 32 random bytes.
func newAPIKey() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return keyPrefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// withWorkspaceStore opens the configured database and finds workspace.
// create makes a missing workspace; without it, a missing workspace is an
// error, except for those the configuration declares (server.workspace
// and workspaces[]), which serve creates at start anyway: a key for the
// default workspace works on a database serve never opened.
func (e *env) withWorkspaceStore(ctx context.Context, workspace string, create bool, fn func(st store.Store, ws store.Workspace) error) error {
	cfg, err := e.load()
	if err != nil {
		return err
	}
	u, err := parseDatabase(cfg.Database.URL)
	if err != nil {
		return err
	}
	o, err := openDatabase(ctx, u, newLogger(e.stderr, cfg.Log))
	if err != nil {
		return err
	}
	defer o.close()
	ws, err := findWorkspace(ctx, o.st, cfg, workspace, create)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("workspace %q does not exist in database %s; check the name (agentcraft keys list --workspace NAME), "+
			"or create it with --create-workspace", workspace, u)
	case err != nil:
		return fmt.Errorf("workspace %q in database %s: %w", workspace, u, err)
	}
	return fn(o.st, ws)
}

// findWorkspace finds workspace in st; create, or the configuration
// declaring it (serve creates those at start anyway), makes a missing one.
func findWorkspace(ctx context.Context, st store.Store, cfg config.Config, workspace string, create bool) (store.Workspace, error) {
	ws, err := st.Workspaces().GetByName(ctx, workspace)
	if errors.Is(err, store.ErrNotFound) && (create || declaredWorkspace(cfg, workspace)) {
		ws, err = st.Workspaces().GetOrCreate(ctx, workspace)
	}
	return ws, err
}

// declaredWorkspace reports whether cfg names workspace, as its
// server.workspace or one of its workspaces.
func declaredWorkspace(cfg config.Config, workspace string) bool {
	if workspace == cfg.Server.Workspace {
		return true
	}
	for _, w := range cfg.Workspaces {
		if w.Name == workspace {
			return true
		}
	}
	return false
}

// auditKey writes a key event to the audit log at once (a CLI command has
// no recorder running). The key change already happened, so a failure is a
// warning, not the command's error.
func (e *env) auditKey(ctx context.Context, st store.Store, ev store.AuditEvent) {
	ev.Actor = audit.ActorCLI
	if err := st.AuditLog().Append(ctx, ev); err != nil {
		fmt.Fprintf(e.stderr, "warning: the audit log did not record %s of %s: %v\n", ev.Action, ev.Target, err)
	}
}

func keysCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{Use: "keys", Short: "Manage API keys"}
	var workspace, name, role, scope string
	var createWorkspace bool
	create := &cobra.Command{
		Use:   "create",
		Short: "Create an API key; it is printed once and stored hashed",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.withWorkspaceStore(cmd.Context(), workspace, createWorkspace, func(st store.Store, ws store.Workspace) error {
				key := newAPIKey()
				h := sha256.Sum256([]byte(key))
				k, err := st.APIKeys().Create(cmd.Context(), store.APIKey{WorkspaceID: ws.ID, Name: name, Prefix: key[:len(keyPrefix)+6], Hash: h[:],
					Role: store.Role(role), Scope: scope})
				if err != nil {
					return err
				}
				fmt.Fprintln(e.stdout, key)
				fmt.Fprintf(e.stderr, "created %s key %s (%s) for workspace %q; it is shown only now, store it safely\n", k.Role, k.ID, k.Prefix, ws.Name)
				e.auditKey(cmd.Context(), st, store.AuditEvent{WorkspaceID: ws.ID, Action: "apikey.create", Target: "apikey:" + k.ID,
					Details: audit.Details(map[string]any{"name": name, "role": string(k.Role), "scope": k.Scope})})
				return nil
			})
		},
	}
	create.Flags().StringVar(&workspace, "workspace", "default", "workspace the key gives access to; it must exist or be declared in the configuration (server.workspace, workspaces)")
	create.Flags().BoolVar(&createWorkspace, "create-workspace", false, "create the workspace when it does not exist")
	create.Flags().StringVar(&name, "name", "", "a label to tell keys apart")
	create.Flags().StringVar(&role, "role", "member", "the key's role in the workspace: owner, admin, member or guest")
	create.Flags().StringVar(&scope, "scope", "", "narrow the key below its role: chat (read and chat only) or read")

	list := &cobra.Command{
		Use:   "list",
		Short: "List a workspace's API keys (never the keys themselves)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.withWorkspaceStore(cmd.Context(), workspace, false, func(st store.Store, ws store.Workspace) error {
				keys, err := st.APIKeys().List(cmd.Context(), ws.ID)
				if err != nil {
					return err
				}
				tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tPREFIX\tNAME\tROLE\tSCOPE\tCREATED\tLAST USED\tREVOKED")
				for _, k := range keys {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Prefix, k.Name, k.Role, cmp.Or(k.Scope, "-"),
						k.CreatedAt.Format("2006-01-02 15:04"), fmtTime(k.LastUsedAt), fmtTime(k.RevokedAt))
				}
				return tw.Flush()
			})
		},
	}
	list.Flags().StringVar(&workspace, "workspace", "default", "workspace")

	revoke := &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke an API key (servers notice within 30 seconds)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.withWorkspaceStore(cmd.Context(), workspace, false, func(st store.Store, ws store.Workspace) error {
				if err := st.APIKeys().Revoke(cmd.Context(), ws.ID, args[0]); err != nil {
					return fmt.Errorf("revoke %s: %w", args[0], err)
				}
				fmt.Fprintln(e.stdout, "revoked", args[0])
				e.auditKey(cmd.Context(), st, store.AuditEvent{WorkspaceID: ws.ID, Action: "apikey.revoke", Target: "apikey:" + args[0]})
				return nil
			})
		},
	}
	revoke.Flags().StringVar(&workspace, "workspace", "default", "workspace")
	cmd.AddCommand(create, list, revoke)
	return cmd
}

func fmtTime(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.Format("2006-01-02 15:04")
}
