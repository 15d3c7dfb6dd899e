package cli

import (
	"github.com/spf13/cobra"

	"github.com/agentcraftlab/agentcraft/internal/database"
)

// workerCmd runs workflow runs from the queue without serving HTTP: the
// scale-out process of the PostgreSQL setup (more workers on more
// machines, each with its own AGENTCRAFT_WORKER_ID).
func workerCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "worker",
		Short: "Execute queued workflow runs and ingest jobs (no HTTP server); for PostgreSQL scale-out",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := e.load()
			if err != nil {
				return err
			}
			logger := newLogger(e.stderr, cfg.Log)
			tuneGC(cfg.Server, logger)
			stopTracing, err := startTracing(cmd.Context(), cfg, logger)
			if err != nil {
				return err
			}
			defer stopTracing()
			u, err := parseDatabase(cfg.Database.URL)
			if err != nil {
				return err
			}
			if u.Kind == database.SQLite {
				logger.Warn("worker_on_sqlite", "reason", "serve already executes runs on SQLite, which allows one executing process",
					"fix", "point database.url at PostgreSQL to run separate workers")
			}
			lock, err := lockDatabase(u, "worker")
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
			// A worker exists to execute, whatever the shared file says
			// of serve.
			execute := true
			cfg.Workflows.Execute = &execute
			wf, err := startWorkflows(ctx, cfg, stk, logger, "worker")
			if err != nil {
				return err
			}
			// Retention runs in every worker too; on PostgreSQL the advisory
			// lock lets one process at a time prune.
			stopRetention, err := startRetention(ctx, cfg, &openedDB{db: stk.db, st: stk.st}, stk.memories, logger)
			if err != nil {
				wf.stop(0)
				return err
			}
			defer stopRetention()
			_, stopMetrics, err := serveMetrics(cfg.Metrics, stk.metrics, logger)
			if err != nil {
				wf.stop(0)
				return err
			}
			defer stopMetrics()
			logger.Info("worker_started", "database", u.String(), "worker_id", wf.runs.Owner())
			defer releaseWhenIdle(ctx)()
			<-ctx.Done()
			// Drain: no new jobs; running runs get worker.shutdown_timeout
			// to finish, then are handed back to the other workers.
			logger.Info("worker_stopping", "shutdown_timeout", cfg.Worker.ShutdownTimeout, "runs", len(wf.runs.Active()))
			wf.stop(cfg.Worker.ShutdownTimeout)
			logger.Info("worker_stopped")
			return nil
		},
	}
}
