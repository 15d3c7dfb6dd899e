// Package cli is the agentcraft command line: flags, configuration
// loading, wiring of the store, platform and HTTP server, and signals.
// cmd/agentcraft only calls Main.
package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/agentcraftlab/agentcraft/cmd/agentcraft/internal/config"
	"github.com/agentcraftlab/agentcraft/internal/tracing"
)

// Version and Commit are set at build time by `make build`, with
// -ldflags "-X .../internal/cli.Version=v1.2.3 -X .../internal/cli.Commit=abc123".
// Without them, version and commit come from the build information the go
// command records (the module version; vcs.revision inside a git checkout).
var (
	Version = ""
	Commit  = ""
)

func version() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// commit is the source revision the binary was built from, "-dirty" when
// the work tree had changes; "unknown" when neither Commit nor the build
// information says.
func commit() string {
	if Commit != "" {
		return Commit
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "unknown"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return rev
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
	root.AddCommand(usersCmd(e), tasksCmd(e), skillsCmd(e), workersCmd(e), triggersCmd(e))
	root.AddCommand(dbCmd(e), backupCmd(e), restoreCmd(e))
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
		Short: "Print the version, the commit it was built from and the Go toolchain",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(e.stdout, "agentcraft %s commit %s %s %s/%s\n", version(), commit(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
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
	// Records logged with a context carry its span's trace_id and span_id
	// (nothing while tracing is off).
	if c.Format == "json" {
		return slog.New(tracing.LogHandler(slog.NewJSONHandler(w, opts)))
	}
	return slog.New(tracing.LogHandler(slog.NewTextHandler(w, opts)))
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
			u, err := parseDatabase(cfg.Database.URL)
			if err != nil {
				return err
			}
			o, err := openDatabase(cmd.Context(), u, newLogger(e.stderr, cfg.Log))
			if err != nil {
				return err
			}
			defer o.close()
			if n := int(o.applied); n > 0 {
				fmt.Fprintf(e.stdout, "applied %d %s: %s\n", n, plural(n, "migration", "migrations"), u)
			} else {
				fmt.Fprintln(e.stdout, "database is up to date:", u)
			}
			if o.moved > 0 {
				fmt.Fprintf(e.stdout, "moved %d search documents from %s into the database\n", o.moved, legacySearchFile)
			}
			return nil
		},
	}
}
