package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agentcraftlab/agentcraft/cmd/agentcraft/internal/config"
	"github.com/agentcraftlab/agentcraft/internal/database"
	"github.com/agentcraftlab/agentcraft/memory"
	"github.com/agentcraftlab/agentcraft/store/retention"
)

// usageRollupOf is the usage_detail step of every pruner this package
// builds: the store's usage rollup, which folds detail rows into daily
// totals (so /api/usage keeps its sums) before deleting them.
func usageRollupOf(o *openedDB) retention.UsageRollup {
	return o.st.Usage().Rollup
}

// newPruner builds the pruner of the configured policies on o; the
// search indexes of the memories of the conversations it removes are
// dropped through mem.
func newPruner(cfg config.Config, o *openedDB, mem *memory.Memories, logger *slog.Logger) (*retention.Pruner, error) {
	policy, err := cfg.Retention.Policy()
	if err != nil {
		return nil, fmt.Errorf("retention: %w", err)
	}
	opts := &retention.Options{Policy: policy, Logger: logger, UsageRollup: usageRollupOf(o)}
	if mem != nil {
		opts.ConversationsRemoved = func(ctx context.Context, removed []retention.RemovedRow) error {
			var errs []error
			for _, r := range removed {
				errs = append(errs, mem.DropConversation(ctx, r.WorkspaceID, r.ID))
			}
			return errors.Join(errs...)
		}
	}
	return retention.New(o.db, opts)
}

// startRetention runs the pruner and, on SQLite, the WAL checkpoints on
// the configured schedule (serve; worker on PostgreSQL, where the
// advisory lock lets one process at a time prune).
func startRetention(ctx context.Context, cfg config.Config, o *openedDB, mem *memory.Memories, logger *slog.Logger) (stop func(), err error) {
	p, err := newPruner(cfg, o, mem, logger)
	if err != nil {
		return nil, err
	}
	svc := retention.NewService(p, &retention.ServiceOptions{Interval: cfg.Retention.Interval,
		CheckpointInterval: cfg.Retention.CheckpointInterval, Logger: logger})
	if err := svc.Start(ctx); err != nil {
		return nil, err
	}
	return svc.Stop, nil
}

func dbCmd(e *env) *cobra.Command {
	c := &cobra.Command{Use: "db", Short: "Database maintenance: prune by the retention policies, stats, vacuum"}
	c.AddCommand(dbPruneCmd(e), dbStatsCmd(e), dbVacuumCmd(e))
	return c
}

func dbPruneCmd(e *env) *cobra.Command {
	var dryRun, asJSON bool
	c := &cobra.Command{
		Use:   "prune",
		Short: "Remove what the retention policies no longer keep, once (serve does it every retention.interval)",
		Long: "Applies agentcraft.yaml's retention: and the workspaces' overrides once, in short batches, and reports\n" +
			"what it removed. It works beside a running server. On SQLite it then checkpoints the WAL and returns\n" +
			"freed pages to the file system when the file's auto_vacuum mode allows (else it says so).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := e.load()
			if err != nil {
				return err
			}
			logger := newLogger(e.stderr, cfg.Log)
			o, err := openConfigured(cmd.Context(), cfg.Database.URL, logger)
			if err != nil {
				return err
			}
			defer o.close()
			// The conversations it removes take their memories' search
			// index along.
			emb, err := newEmbedder(cfg.Search.Embedder)
			if err != nil {
				return err
			}
			eng, closeEngine, err := openSearch(cmd.Context(), o.db, emb, logger)
			if err != nil {
				return err
			}
			defer closeEngine()
			mem, err := memory.NewMemories(o.st, eng, &memory.MemoryOptions{Logger: logger})
			if err != nil {
				return err
			}
			p, err := newPruner(cfg, o, mem, logger)
			if err != nil {
				return err
			}
			r, ran, err := retention.RunLocked(cmd.Context(), p, dryRun)
			if !ran && err == nil {
				return errors.New("db prune: another process is pruning this database now (it holds the retention lock); try again later")
			}
			if asJSON {
				if jerr := writeJSON(e.stdout, r); jerr != nil {
					return jerr
				}
			} else if werr := r.WriteText(e.stdout); werr != nil {
				return werr
			}
			if len(r.Removed) == 0 && len(r.Skipped) == 0 && !asJSON {
				fmt.Fprintln(e.stdout, "no retention policy is set: everything is kept (see README, Retention)")
			}
			return err
		},
	}
	c.Flags().BoolVar(&dryRun, "dry-run", false, "count what would be removed, remove nothing")
	c.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return c
}

func dbStatsCmd(e *env) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "stats",
		Short: "What takes the space: rows and bytes per table, pages, free pages, WAL size",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := e.load()
			if err != nil {
				return err
			}
			o, err := openConfigured(cmd.Context(), cfg.Database.URL, newLogger(e.stderr, cfg.Log))
			if err != nil {
				return err
			}
			defer o.close()
			s, err := o.db.Stats(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(e.stdout, s)
			}
			return writeStats(e.stdout, s)
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the stats as JSON")
	return c
}

func writeStats(w io.Writer, s database.Stats) error {
	fmt.Fprintf(w, "database  %s (%s)\n", s.Database, s.Kind)
	fmt.Fprintf(w, "size      %s", humanBytes(s.FileBytes))
	if s.Kind == "sqlite" {
		fmt.Fprintf(w, " + WAL %s; %d pages of %d bytes, %d free (%s); auto_vacuum %s", humanBytes(s.WALBytes), s.PageCount, s.PageSize,
			s.FreelistPages, humanBytes(s.FreelistPages*s.PageSize), s.AutoVacuum)
	}
	fmt.Fprintln(w)
	if s.BytesEstimated {
		fmt.Fprintln(w, "(this SQLite build lacks the dbstat table: table sizes are not measured)")
	}
	if s.RowsEstimated {
		fmt.Fprintln(w, "(row counts are PostgreSQL's estimates)")
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "TABLE\tROWS\tDATA\tINDEXES\tTOTAL\t")
	for _, t := range s.Tables {
		rows := fmt.Sprint(t.Rows)
		if t.Rows < 0 {
			rows = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", t.Name, rows, humanBytes(t.Bytes), humanBytes(t.IndexBytes), humanBytes(t.Bytes+t.IndexBytes))
	}
	return tw.Flush()
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

func dbVacuumCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "vacuum",
		Short: "Rewrite the SQLite file compactly and switch it to incremental auto-vacuum (serve must be stopped)",
		Long: "SQLite keeps the pages that deleted rows free inside the file. A database created by this version\n" +
			"gives them back after every prune (auto_vacuum=INCREMENTAL); one created earlier can only change that\n" +
			"mode by a full VACUUM, which rewrites the file (it needs free disk space of about its size) and blocks\n" +
			"every write meanwhile. So this command takes the database lock: stop serve first.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := e.load()
			if err != nil {
				return err
			}
			u, err := parseDatabase(cfg.Database.URL)
			if err != nil {
				return err
			}
			if u.Kind != database.SQLite {
				return errors.New("db vacuum: PostgreSQL reclaims space with its autovacuum; run VACUUM (FULL) in psql if you must")
			}
			lock, err := lockDatabase(u, "db vacuum")
			if err != nil {
				return err
			}
			defer lock.release()
			o, err := openDatabase(cmd.Context(), u, newLogger(e.stderr, cfg.Log))
			if err != nil {
				return err
			}
			defer o.close()
			before, _ := o.db.Stats(cmd.Context())
			if err := o.db.Vacuum(cmd.Context()); err != nil {
				return err
			}
			after, err := o.db.Stats(cmd.Context())
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "vacuumed %s: %s → %s, auto_vacuum %s\n", u, humanBytes(before.FileBytes), humanBytes(after.FileBytes), after.AutoVacuum)
			return nil
		},
	}
}
