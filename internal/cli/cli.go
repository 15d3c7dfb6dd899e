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

	"github.com/agentcraftlab/agentcraft/internal/config"
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
	return root
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
			return nil, err
		}
		st = s
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		s, err := postgres.Open(ctx, url, &postgres.Options{Logger: logger})
		if err != nil {
			return nil, err
		}
		st = s
	default:
		return nil, errors.New("database.url must start with sqlite:// or postgres://")
	}
	if err := st.Migrate(ctx); err != nil {
		st.Close()
		return nil, err
	}
	if created {
		logger.Warn("database_created", "database", databaseName(url),
			"hint", "there was no database at this path; if you meant an existing one, pass --config or set database.url")
	} else {
		logger.Info("database_opened", "database", databaseName(url))
	}
	return st, nil
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
			st, err := openStore(cmd.Context(), cfg.Database.URL, newLogger(e.stderr, cfg.Log))
			if err != nil {
				return err
			}
			defer st.Close()
			fmt.Fprintln(e.stdout, "database is up to date:", databaseName(cfg.Database.URL))
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
