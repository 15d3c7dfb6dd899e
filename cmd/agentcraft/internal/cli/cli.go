// Package cli is the agentcraft command line: flags, configuration
// loading, wiring of the store, platform and HTTP server, and signals.
// cmd/agentcraft only calls Main.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/agentcraftlab/agentcraft/cmd/agentcraft/internal/config"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/store/postgres"
	"github.com/agentcraftlab/agentcraft/store/sqlite"
)

// Version is set at build time with -ldflags "-X .../internal/cli.Version=v1.2.3".
var Version = ""

func version() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// env holds what every command shares.
type env struct {
	configPath string
	stdout     io.Writer
	stderr     io.Writer
}

// Main runs the command line with args and returns the exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	privateFiles()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRoot(&env{stdout: stdout, stderr: stderr})
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(stderr, "agentcraft:", err)
		return 1
	}
	return 0
}

func newRoot(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:           "agentcraft",
		Short:         "Self-hosted AI agents and workflows in one binary",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&e.configPath, "config", "", "configuration file (default ./agentcraft.yaml when present)")
	root.AddCommand(serveCmd(e), migrateCmd(e), keysCmd(e), versionCmd(e), runCmd(e), lintCmd(e), workerCmd(e), piiCmd(e), guardCmd(e), kbCmd(e), mcpCmd(e))
	root.AddCommand(usersCmd(e))
	rejectUnknownSubcommands(root)
	return root
}

// rejectUnknownSubcommands makes every group command below root (keys,
// kb, mcp, ...) fail on an argument that names none of its subcommands.
// Cobra would print the group's help and exit 0, so a mistyped
// `agentcraft keys craete` in a script looked like success. The bare
// group still prints its help.
func rejectUnknownSubcommands(root *cobra.Command) {
	for _, c := range root.Commands() {
		rejectUnknownSubcommands(c)
		if c.Runnable() || !c.HasSubCommands() {
			continue
		}
		c.Args = cobra.ArbitraryArgs
		c.SuggestionsMinimumDistance = 2
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
			if sug := cmd.SuggestionsFor(args[0]); len(sug) > 0 {
				msg += "; did you mean " + strings.Join(sug, " or ") + "?"
			}
			return fmt.Errorf("%s; run '%s --help' for its commands", msg, cmd.CommandPath())
		}
	}
}

func versionCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(e.stdout, "agentcraft", version())
			return nil
		},
	}
}

func (e *env) load() (config.Config, error) {
	return config.Load(e.configPath, nil)
}

func newLogger(w io.Writer, c config.Log) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(c.Level))
	opts := &slog.HandlerOptions{Level: level}
	if c.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// openStore opens the database named by url and applies migrations. It
// logs which database it opened, and whether it had to create it, so that
// a command run from the wrong directory says so.
func openStore(ctx context.Context, url string, logger *slog.Logger) (store.Store, error) {
	st, _, err := openStoreCounted(ctx, url, logger)
	return st, err
}

// migrationCounter is a store that reports how many migrations it applied
// (store/sqlite and store/postgres).
type migrationCounter interface {
	MigrateCount(ctx context.Context) (int, error)
}

// openStoreCounted is openStore that also returns the number of
// migrations applied, 0 when the schema was up to date.
func openStoreCounted(ctx context.Context, url string, logger *slog.Logger) (store.Store, int, error) {
	var st store.Store
	created := false
	switch {
	case strings.HasPrefix(url, "sqlite://"):
		path := strings.TrimPrefix(url, "sqlite://")
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			created = true
		}
		s, err := sqlite.Open(ctx, path, &sqlite.Options{Logger: logger})
		if err != nil {
			return nil, 0, err
		}
		st = s
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		s, err := postgres.Open(ctx, url, &postgres.Options{Logger: logger})
		if err != nil {
			return nil, 0, err
		}
		st = s
	default:
		return nil, 0, errors.New("database.url must start with sqlite:// or postgres://")
	}
	applied := 0
	var err error
	if mc, ok := st.(migrationCounter); ok {
		applied, err = mc.MigrateCount(ctx)
	} else {
		err = st.Migrate(ctx)
	}
	if err != nil {
		st.Close()
		return nil, 0, err
	}
	if created {
		logger.Warn("database_created", "database", databaseName(url),
			"hint", "there was no database at this path; if you meant an existing one, pass --config or set database.url")
	} else {
		logger.Info("database_opened", "database", databaseName(url))
	}
	return st, applied, nil
}

// databaseName is how messages name the database of url: the absolute
// path of a SQLite file, a PostgreSQL URL without its password.
func databaseName(url string) string {
	if p, ok := strings.CutPrefix(url, "sqlite://"); ok {
		if abs, err := filepath.Abs(p); err == nil && p != sqlite.MemoryPath {
			return abs
		}
		return p
	}
	return redactURL(url)
}

func migrateCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Apply database migrations (serve does this at start)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := e.load()
			if err != nil {
				return err
			}
			st, n, err := openStoreCounted(cmd.Context(), cfg.Database.URL, newLogger(e.stderr, cfg.Log))
			if err != nil {
				return err
			}
			defer st.Close()
			if n > 0 {
				fmt.Fprintf(e.stdout, "applied %d %s: %s\n", n, plural(n, "migration", "migrations"), databaseName(cfg.Database.URL))
			} else {
				fmt.Fprintln(e.stdout, "database is up to date:", databaseName(cfg.Database.URL))
			}
			return nil
		},
	}
}

// redactURL hides a password in a database URL.
func redactURL(u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return u
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return u
	}
	userinfo := rest[:at]
	if user, _, hasPass := strings.Cut(userinfo, ":"); hasPass {
		return scheme + "://" + user + ":xxxxx@" + rest[at+1:]
	}
	return u
}
