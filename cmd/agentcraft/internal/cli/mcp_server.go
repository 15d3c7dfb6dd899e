package cli

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agentcraftlab/agentcraft/audit"
	"github.com/agentcraftlab/agentcraft/cmd/agentcraft/internal/config"
	"github.com/agentcraftlab/agentcraft/server/mcpserver"
	"github.com/agentcraftlab/agentcraft/store"
)

// mcpServerCommands are AgentCraft's own MCP server: `mcp serve --stdio`
// and the OAuth clients of /mcp (`mcp clients create|list|revoke`).
func mcpServerCommands(e *env) []*cobra.Command {
	return []*cobra.Command{mcpServeCmd(e), mcpClientsCmd(e)}
}

// mcpServerOptions turns the mcp section of the configuration into the
// options of /mcp, warning when it is open without tokens. The caller adds
// the services (runner, runs, knowledge).
func mcpServerOptions(cfg config.Config, masterKey []byte, logger *slog.Logger) (*mcpserver.Options, error) {
	m := cfg.MCP
	o := &mcpserver.Options{Auth: m.Auth, JWKSURL: m.JWKSURL, Issuer: m.Issuer, Audience: m.Audience, AllowedOrigins: m.AllowedOrigins,
		Logger: logger, Version: version(), MaxBodyBytes: cfg.Server.MaxBodyBytes}
	if m.Auth == mcpserver.AuthNone {
		logger.Warn("mcp_authentication_disabled", "reason", "mcp.auth is none", "workspace", cfg.Server.Workspace,
			"risk", "anyone who reaches "+cfg.Server.Addr+"/mcp can call every agent, workflow and knowledge base of the workspace; use only on a trusted private network")
		return o, nil
	}
	key, err := mcpserver.DeriveTokenKey(masterKey)
	if err != nil {
		return nil, err
	}
	o.TokenKey = key
	return o, nil
}

func mcpServeCmd(e *env) *cobra.Command {
	var stdio bool
	var workspace string
	cmd := &cobra.Command{
		Use:   "serve --stdio",
		Short: "Serve a workspace's agents, workflows and docsearch as MCP tools over stdio (for desktop clients)",
		Long: `Serve speaks MCP over standard input and output, as desktop clients (Claude
Desktop, IDEs) start local servers. There is no authentication: the user who
runs the command sees every tool of the workspace. Over HTTP, the same tools
are at /mcp of 'agentcraft serve', behind OAuth2 tokens.

Logs go to standard error; standard output carries only the protocol.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !stdio {
				return fmt.Errorf("mcp serve needs --stdio; over HTTP, /mcp is served by 'agentcraft serve'")
			}
			cfg, err := e.load()
			if err != nil {
				return err
			}
			if workspace == "" {
				workspace = cfg.Server.Workspace
			}
			cfg.Server.Workspace = workspace
			logger := newLogger(e.stderr, cfg.Log)
			// It executes and resumes runs as serve does, so on SQLite it
			// must be the only such process (see lock.go).
			u, err := parseDatabase(cfg.Database.URL)
			if err != nil {
				return err
			}
			lock, err := lockDatabase(u, "mcp serve")
			if err != nil {
				return err
			}
			defer lock.release()
			ctx := cmd.Context()
			stk, err := openPlatform(ctx, cfg, logger, logger)
			if err != nil {
				return err
			}
			defer stk.close()
			wf, err := startWorkflows(ctx, cfg, stk, logger, "mcp")
			if err != nil {
				return err
			}
			defer func() {
				wf.stop(cfg.Server.ShutdownTimeout)
			}()
			in, out := e.stdioPipes(cmd)
			return mcpserver.ServeStdio(ctx, stk.p, stk.p.DefaultWorkspace().ID, in, out,
				&mcpserver.StdioOptions{Runner: stk.runner, Runs: wf.runs, Knowledge: stk.knowledge, Logger: logger, Version: version()})
		},
	}
	cmd.Flags().BoolVar(&stdio, "stdio", false, "speak MCP over standard input and output")
	cmd.Flags().StringVar(&workspace, "workspace", "", "workspace whose tools are served (default server.workspace)")
	return cmd
}

// stdioPipes returns the command's input and output as the closers the
// MCP transport wants; closing them leaves the process's own files open.
func (e *env) stdioPipes(cmd *cobra.Command) (nopReadCloser, nopWriteCloser) {
	in := cmd.InOrStdin()
	if in == nil {
		in = os.Stdin
	}
	return nopReadCloser{in}, nopWriteCloser{e.stdout}
}

type nopReadCloser struct{ r io.Reader }

func (n nopReadCloser) Read(p []byte) (int, error) { return n.r.Read(p) }
func (nopReadCloser) Close() error                 { return nil }

type nopWriteCloser struct{ w io.Writer }

func (n nopWriteCloser) Write(p []byte) (int, error) { return n.w.Write(p) }
func (nopWriteCloser) Close() error                  { return nil }

func mcpClientsCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "clients",
		Short: "Manage the OAuth clients that get tokens for /mcp (client-credentials grant)",
		Long: `An OAuth client trades its id and secret for a one-hour token at
POST /oauth/token and calls /mcp with it. Scopes decide which tools it sees:

  docsearch/read     list the docsearch tool
  docsearch/search   list and call docsearch (knowledge-base search)
  agents/NAME        list and call agent NAME (tool agent_NAME); agents/* every agent
  workflows/NAME     list and run workflow NAME (tool workflow_NAME); workflows/* every workflow`,
	}
	var workspace, name, scopes string
	create := &cobra.Command{
		Use:   "create --name NAME --scopes \"SCOPE ...\"",
		Short: "Create a client; its secret is printed once and stored hashed",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if strings.TrimSpace(name) == "" {
				return fmt.Errorf("--name is empty: name the client, e.g. --name claude-desktop")
			}
			sc, err := mcpserver.ParseScopes(scopes)
			if err != nil {
				return fmt.Errorf("--scopes: %w", err)
			}
			return e.withWorkspaceStore(cmd.Context(), workspace, true, func(st store.Store, ws store.Workspace) error {
				secret, hash := mcpserver.NewClientSecret()
				c, err := st.OAuthClients().Create(cmd.Context(), store.OAuthClient{WorkspaceID: ws.ID, Name: name, SecretHash: hash, Scopes: sc})
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "client_id: %s\nclient_secret: %s\n", c.ID, secret)
				fmt.Fprintf(e.stderr, "created OAuth client %s (%s) for workspace %q with scopes %q; the secret is shown only now, store it safely\n",
					c.ID, name, ws.Name, strings.Join(sc, " "))
				e.auditKey(cmd.Context(), st, store.AuditEvent{WorkspaceID: ws.ID, Action: "oauth_client.create", Target: "oauth_client:" + c.ID,
					Details: audit.Details(map[string]any{"name": name, "scopes": sc})})
				return nil
			})
		},
	}
	create.Flags().StringVar(&workspace, "workspace", "default", "workspace whose tools the client reaches (created when missing)")
	create.Flags().StringVar(&name, "name", "", "a label to tell clients apart")
	create.Flags().StringVar(&scopes, "scopes", "", `space-separated scopes, e.g. "docsearch/read docsearch/search agents/*"`)

	list := &cobra.Command{
		Use:   "list",
		Short: "List a workspace's OAuth clients (never their secrets)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.withWorkspaceStore(cmd.Context(), workspace, false, func(st store.Store, ws store.Workspace) error {
				clients, err := st.OAuthClients().List(cmd.Context(), ws.ID)
				if err != nil {
					return err
				}
				tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tNAME\tSCOPES\tCREATED\tREVOKED")
				for _, c := range clients {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.ID, c.Name, strings.Join(c.Scopes, " "), c.CreatedAt.Format("2006-01-02 15:04"), fmtTime(c.RevokedAt))
				}
				return tw.Flush()
			})
		},
	}
	list.Flags().StringVar(&workspace, "workspace", "default", "workspace")

	revoke := &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke a client: no new tokens, and its tokens stop working within 30 seconds",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.withWorkspaceStore(cmd.Context(), workspace, false, func(st store.Store, ws store.Workspace) error {
				if err := st.OAuthClients().Revoke(cmd.Context(), ws.ID, args[0]); err != nil {
					return fmt.Errorf("revoke %s: %w", args[0], err)
				}
				fmt.Fprintln(e.stdout, "revoked", args[0])
				e.auditKey(cmd.Context(), st, store.AuditEvent{WorkspaceID: ws.ID, Action: "oauth_client.revoke", Target: "oauth_client:" + args[0]})
				return nil
			})
		},
	}
	revoke.Flags().StringVar(&workspace, "workspace", "default", "workspace")
	cmd.AddCommand(create, list, revoke)
	return cmd
}
