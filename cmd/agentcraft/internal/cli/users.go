package cli

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/agentcraftlab/agentcraft/cmd/agentcraft/internal/config"
	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/store"
)

// withIdentity opens the configured database and an identity service
// whose audit events are written at once (a command has no recorder
// running; a failed write is a warning, the change having happened).
// Account events also go to the default workspace when it exists, as
// serve's do.
func (e *env) withIdentity(ctx context.Context, fn func(cfg config.Config, st store.Store, ids *identity.Service) error) error {
	cfg, err := e.load()
	if err != nil {
		return err
	}
	o, err := openConfigured(ctx, cfg.Database.URL, newLogger(e.stderr, cfg.Log))
	if err != nil {
		return err
	}
	defer o.close()
	st := o.st
	opts := identity.Options{Audit: func(ctx context.Context, ev store.AuditEvent) {
		if err := st.AuditLog().Append(ctx, ev); err != nil {
			fmt.Fprintf(e.stderr, "warning: the audit log did not record %s: %v\n", ev.Action, err)
		}
	}}
	if ws, err := st.Workspaces().GetByName(ctx, cfg.Server.Workspace); err == nil {
		opts.AuditWorkspaceID = ws.ID
	}
	ids, err := newIdentity(st, cfg, opts)
	if err != nil {
		return err
	}
	return fn(cfg, st, ids)
}

// readPassword reads one line from in: without echo, after a prompt,
// when in is the terminal.
func (e *env) readPassword(in io.Reader) (string, error) {
	if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(e.stderr, "Password (12 characters or more): ")
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(e.stderr)
		return string(b), err
	}
	line, err := bufio.NewReader(io.LimitReader(in, 4096)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read the password from standard input: %w", err)
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("no password on standard input; pipe it in (echo \"$PASSWORD\" | agentcraft users create ...) or use --link")
	}
	return line, nil
}

// baseURL is where links point: --base-url, else the server's address
// (a wildcard host read as localhost).
func baseURL(flag string, cfg config.Config) string {
	if flag != "" {
		return strings.TrimRight(flag, "/")
	}
	return addrURL(cmp.Or(cfg.Server.Addr, "127.0.0.1:8080"))
}

// addrURL is the http URL of a listen address, a wildcard host read as
// localhost.
func addrURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

func usersCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{Use: "users", Short: "Manage the people who sign in"}

	var email, name, workspace, role, base string
	var owner, link bool
	create := &cobra.Command{
		Use:   "create",
		Short: "Create a user; the password is read from standard input, or --link prints a one-time sign-in link",
		Long: `Create a user who signs in with an e-mail address and password.

The password is read from standard input (one line; at least 12
characters), so it stays out of the shell history:

  echo "$PASSWORD" | agentcraft users create --email ann@example.com --owner

With --link no password is set: a one-time sign-in link valid for 24 hours
is printed instead, for the user to sign in and choose one.

--owner makes the user owner of the workspace (--workspace, default the
configuration's server.workspace; created when missing); --role gives
another role there.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if owner && role != "" && role != string(identity.RoleOwner) {
				return fmt.Errorf("--owner and --role %s disagree; pass one of them", role)
			}
			if owner {
				role = string(identity.RoleOwner)
			}
			if role == "" && cmd.Flags().Changed("workspace") {
				role = string(identity.RoleMember)
			}
			if role != "" && !store.Role(role).Valid() {
				return fmt.Errorf("--role %q is not a role; use owner, admin, member or guest", role)
			}
			password := ""
			if !link {
				pw, err := e.readPassword(cmd.InOrStdin())
				if err != nil {
					return err
				}
				if err := identity.CheckPassword(pw); err != nil {
					return err
				}
				password = pw
			}
			return e.withIdentity(cmd.Context(), func(cfg config.Config, st store.Store, ids *identity.Service) error {
				ctx := cmd.Context()
				u, err := ids.CreateUser(ctx, identity.NewUser{Email: email, DisplayName: name, Password: password})
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stderr, "created user %s (%s)\n", u.ID, u.Email)
				if role != "" {
					wsName := cmp.Or(workspace, cfg.Server.Workspace, "default")
					ws, err := st.Workspaces().GetOrCreate(ctx, wsName)
					if err != nil {
						return err
					}
					if _, err := ids.AddMember(ctx, identity.CLI, ws.ID, u.ID, store.Role(role)); err != nil {
						return err
					}
					fmt.Fprintf(e.stderr, "%s is %s of workspace %q\n", u.Email, role, ws.Name)
				}
				if link {
					l, err := ids.CreateSignInLink(ctx, identity.CLI, u.ID)
					if err != nil {
						return err
					}
					fmt.Fprintln(e.stdout, baseURL(base, cfg)+l.Path)
					fmt.Fprintf(e.stderr, "the link signs %s in once, until %s; it is shown only now\n", u.Email, l.ExpiresAt.Format("2006-01-02 15:04 MST"))
				}
				return nil
			})
		},
	}
	create.Flags().StringVar(&email, "email", "", "the user's e-mail address (required)")
	create.Flags().StringVar(&name, "name", "", "display name")
	create.Flags().BoolVar(&owner, "owner", false, "make the user owner of the workspace")
	create.Flags().StringVar(&workspace, "workspace", "", "workspace to join (default: server.workspace)")
	create.Flags().StringVar(&role, "role", "", "role in the workspace: owner, admin, member or guest (default member with --workspace)")
	create.Flags().BoolVar(&link, "link", false, "set no password; print a one-time sign-in link instead")
	create.Flags().StringVar(&base, "base-url", "", "the server's address as browsers reach it, for --link (default from server.addr)")
	_ = create.MarkFlagRequired("email")

	var linkEmail, linkBase string
	linkCmd := &cobra.Command{
		Use:   "link",
		Short: "Print a one-time sign-in link for an existing user (a forgotten password)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.withIdentity(cmd.Context(), func(cfg config.Config, st store.Store, ids *identity.Service) error {
				u, err := ids.UserByEmail(cmd.Context(), linkEmail)
				if errors.Is(err, store.ErrNotFound) {
					return fmt.Errorf("no user has the address %q; list them with agentcraft users list", linkEmail)
				}
				if err != nil {
					return err
				}
				l, err := ids.CreateSignInLink(cmd.Context(), identity.CLI, u.ID)
				if err != nil {
					return err
				}
				fmt.Fprintln(e.stdout, baseURL(linkBase, cfg)+l.Path)
				return nil
			})
		},
	}
	linkCmd.Flags().StringVar(&linkEmail, "email", "", "the user's e-mail address (required)")
	linkCmd.Flags().StringVar(&linkBase, "base-url", "", "the server's address as browsers reach it (default from server.addr)")
	_ = linkCmd.MarkFlagRequired("email")

	list := &cobra.Command{
		Use:   "list",
		Short: "List users with their workspaces and roles",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.withIdentity(cmd.Context(), func(_ config.Config, st store.Store, ids *identity.Service) error {
				users, err := ids.Users(cmd.Context())
				if err != nil {
					return err
				}
				tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tEMAIL\tNAME\tWORKSPACES\tLAST SIGN-IN\tDISABLED")
				for _, u := range users {
					ms, err := ids.Memberships(cmd.Context(), u.ID)
					if err != nil {
						return err
					}
					var where []string
					for _, m := range ms {
						where = append(where, m.Workspace.Name+":"+string(m.Role))
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", u.ID, u.Email, cmp.Or(u.DisplayName, "-"), cmp.Or(strings.Join(where, ","), "-"),
						fmtTime(u.LastLoginAt), fmtTime(u.DisabledAt))
				}
				return tw.Flush()
			})
		},
	}

	var disableEmail string
	var enable bool
	disable := &cobra.Command{
		Use:   "disable",
		Short: "Disable a user: their sessions end at once and they cannot sign in (--enable undoes it)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.withIdentity(cmd.Context(), func(_ config.Config, st store.Store, ids *identity.Service) error {
				u, err := ids.UserByEmail(cmd.Context(), disableEmail)
				if errors.Is(err, store.ErrNotFound) {
					return fmt.Errorf("no user has the address %q; list them with agentcraft users list", disableEmail)
				}
				if err != nil {
					return err
				}
				if _, err := ids.SetDisabled(cmd.Context(), identity.CLI, u.ID, !enable); err != nil {
					return err
				}
				if enable {
					fmt.Fprintln(e.stdout, "enabled", u.Email)
				} else {
					fmt.Fprintln(e.stdout, "disabled", u.Email)
				}
				return nil
			})
		},
	}
	disable.Flags().StringVar(&disableEmail, "email", "", "the user's e-mail address (required)")
	disable.Flags().BoolVar(&enable, "enable", false, "enable the user again")
	_ = disable.MarkFlagRequired("email")

	cmd.AddCommand(create, linkCmd, list, disable)
	return cmd
}
