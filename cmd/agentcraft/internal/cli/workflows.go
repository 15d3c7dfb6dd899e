package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/agentcraftlab/agentcraft/cmd/agentcraft/internal/config"
	"github.com/agentcraftlab/agentcraft/controlplane"
	"github.com/agentcraftlab/agentcraft/internal/database"
	"github.com/agentcraftlab/agentcraft/internal/egress"
	"github.com/agentcraftlab/agentcraft/queue"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/task"
	"github.com/agentcraftlab/agentcraft/trigger"
	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/nodes"
)

// newEngine builds the workflow engine of a configuration: the built-in
// node kinds, the platform's agents and knowledge bases, and an
// egress-guarded HTTP client. stk may be nil (no agents, no retrieval).
func newEngine(cfg config.Config, stk *stack, logger *slog.Logger) (*workflow.Engine, error) {
	reg := workflow.NewRegistry()
	if err := nodes.RegisterBuiltins(reg); err != nil {
		return nil, err
	}
	guard, err := (&egress.Policy{Allow: cfg.Egress.Allow}).Compile()
	if err != nil {
		return nil, fmt.Errorf("egress.allow: %w", err)
	}
	svc := workflow.Services{HTTP: guard.Client(), Logger: logger}
	if stk != nil {
		svc.Agents = stk.runner.WorkflowAgents(os.Getenv("AGENTCRAFT_WORKER_ID"))
		if stk.knowledge != nil {
			svc.Knowledge = stk.knowledge
		}
		if stk.ledger != nil {
			svc.Actions = stk.ledger
		}
		if stk.images != nil {
			svc.Images = stk.images
		}
		if stk.plans != nil {
			svc.Plans = stk.plans
		}
	}
	return workflow.NewEngine(reg, svc, &workflow.EngineDefaults{MaxSteps: cfg.Workflows.MaxSteps, Timeout: cfg.Workflows.Timeout}), nil
}

// workflowRuntime is the durable workflow side of a server: the run
// service and the job queue that executes its runs.
type workflowRuntime struct {
	runs *controlplane.Service
	// tasks maps the runs of tasks to their tasks (every process that
	// executes runs needs it) and serves the task API.
	tasks *task.Service
	// triggers serves /api/triggers and the webhooks; scheduler fires the
	// schedules (every serve and worker runs one; the fire rows let one
	// process win each tick).
	triggers    *trigger.Service
	scheduler   *trigger.Scheduler
	q           *queue.Queue
	stopSweeper context.CancelFunc
	// stopResumed cancels the runs ResumeOwned executes in goroutines.
	stopResumed context.CancelFunc
	// reg is this process's row in the workers registry (nil when it
	// executes nothing).
	reg *registration
}

// enqueueIngest queues a knowledge-base ingest job.
func (w *workflowRuntime) enqueueIngest(ctx context.Context, workspaceID, jobID string) error {
	return w.q.EnqueueIngest(ctx, queue.IngestArgs{WorkspaceID: workspaceID, JobID: jobID})
}

// startWorkflows opens the queue on the configured database, starts its
// workers and resumes at once the runs this process owned when it last
// stopped (every live run on SQLite, where it is the only executor).
//
// kind names the command in the workers registry ("serve", "worker",
// "mcp").
func startWorkflows(ctx context.Context, cfg config.Config, stk *stack, logger *slog.Logger, kind string) (*workflowRuntime, error) {
	st := stk.st
	eng, err := newEngine(cfg, stk, logger)
	if err != nil {
		return nil, err
	}
	w := &workflowRuntime{}
	single := stk.db.Kind() == database.SQLite
	w.runs = controlplane.New(st, eng, controlplane.Options{
		SingleProcess:   single,
		Logger:          logger,
		Metrics:         stk.metrics,
		Audit:           stk.p.RecordAudit,
		MaxStepsCeiling: cfg.Workflows.MaxStepsCeiling,
		TimeoutCeiling:  cfg.Workflows.TimeoutCeiling,
		StorageQuota:    cfg.Workflows.StorageQuotaMiB << 20, // -1 stays negative: none
		Enqueue: func(ctx context.Context, workspaceID, runID string, wake bool) error {
			args := queue.RunArgs{WorkspaceID: workspaceID, RunID: runID}
			if wake {
				args.Wake = time.Now().UTC().Format(time.RFC3339Nano)
			}
			return w.q.EnqueueRun(ctx, args)
		},
		EnqueueAt: func(ctx context.Context, workspaceID, runID string, at time.Time) error {
			return w.q.EnqueueRunAt(ctx, queue.RunArgs{WorkspaceID: workspaceID, RunID: runID, Wake: "deadline " + at.UTC().Format(time.RFC3339Nano)}, at)
		},
		// w.tasks is set below, before the queue starts executing runs.
		Changed: func(ctx context.Context, r store.Run) { w.tasks.Changed(ctx, r) },
	})
	if w.tasks, err = newTasks(cfg, stk, w.runs, logger); err != nil {
		return nil, err
	}
	stk.gate.Attach(w.tasks)
	execute := cfg.Workflows.Execute == nil || *cfg.Workflows.Execute
	if !execute && single {
		return nil, fmt.Errorf("workflows.execute: false needs PostgreSQL: on SQLite this process is the only one that can execute runs")
	}
	qcfg := queue.Config{DB: stk.db, Workers: cfg.Workflows.Workers, Logger: logger, InsertOnly: !execute, JobRetention: cfg.Retention.QueueJobRetention()}
	if stk.knowledge != nil {
		qcfg.Ingest = func(ctx context.Context, args queue.IngestArgs) error {
			return stk.knowledge.RunJob(ctx, args.WorkspaceID, args.JobID, nil)
		}
	}
	w.q, err = queue.New(qcfg,
		func(ctx context.Context, args queue.RunArgs) error {
			return w.runs.Execute(ctx, args.WorkspaceID, args.RunID)
		})
	if err != nil {
		return nil, fmt.Errorf("open job queue: %w", err)
	}
	if execute {
		if w.reg, err = register(ctx, st.Workers(), kind, w.runs.Owner(), w.runs.Active, logger); err != nil {
			w.q.Close()
			return nil, err
		}
	}
	if err := w.q.Start(ctx); err != nil {
		w.q.Close()
		w.reg.leave()
		return nil, fmt.Errorf("start job queue: %w", err)
	}
	// Resumed runs outlive ctx (a signal): stop drains them with the
	// queue's jobs.
	resumeCtx, stopResumed := context.WithCancel(context.WithoutCancel(ctx))
	w.stopResumed = stopResumed
	if execute {
		n, err := w.runs.ResumeOwned(resumeCtx)
		if err != nil {
			logger.Error("resume_runs_failed", "err", err)
		} else if n > 0 {
			logger.Info("runs_resumed", "count", n)
		}
	} else {
		logger.Info("runs_execute_elsewhere", "reason", "workflows.execute is false: agentcraft worker processes execute runs and ingest jobs")
	}
	if stk.knowledge != nil {
		n, err := stk.knowledge.ResumeJobs(ctx, single, func(ctx context.Context, ws, id string) error {
			return w.q.EnqueueIngest(ctx, queue.IngestArgs{WorkspaceID: ws, JobID: id, Resume: time.Now().UTC().Format(time.RFC3339Nano)})
		})
		if err != nil {
			logger.Error("resume_ingest_jobs_failed", "err", err)
		} else if n > 0 {
			logger.Info("ingest_jobs_resumed", "count", n)
		}
	}
	w.triggers, err = trigger.New(st, w.runs, stk.box, &trigger.Options{Agents: stk.p, Audit: stk.p.RecordAudit, Logger: logger})
	if err != nil {
		w.q.Close()
		return nil, err
	}
	w.scheduler = trigger.NewScheduler(w.triggers, &trigger.SchedulerOptions{Logger: logger})
	if err := w.scheduler.Start(ctx); err != nil {
		w.q.Close()
		return nil, fmt.Errorf("start trigger scheduler: %w", err)
	}
	// Runs whose worker died without coming back (several workers on
	// PostgreSQL) are woken once their lease expires.
	sweepCtx, stop := context.WithCancel(ctx)
	w.stopSweeper = stop
	go w.runs.SweepEvery(sweepCtx, 15*time.Second)
	if stk.knowledge != nil {
		// Temporary knowledge bases (chat attachments) and uploads expire
		// after an hour; any process may remove them.
		go sweepKnowledge(sweepCtx, stk.knowledge, time.Minute, logger)
	}
	return w, nil
}

// handBackGrace is how long, once a stopping process's drain time is
// over, a node in flight may take to finish before it is canceled.
const handBackGrace = 5 * time.Second

// stop stops the trigger scheduler and taking jobs, and lets running runs
// finish for up to drain. Runs still running then are handed back
// (controlplane.HandBack): each stops after its node in flight is saved
// and is queued again for another executor; a node still running
// handBackGrace later is canceled, and the run handed back all the same.
func (w *workflowRuntime) stop(drain time.Duration) {
	w.scheduler.Stop()
	w.stopSweeper()
	handBack := time.AfterFunc(drain, w.runs.HandBack)
	defer handBack.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), drain+handBackGrace)
	defer cancel()
	_ = w.q.Stop(ctx) // at ctx's end it cancels the jobs still running
	// Runs ResumeOwned executes drain on the same schedule: handed back
	// by the timer, canceled at ctx's end.
	go func() {
		<-ctx.Done()
		w.stopResumed()
	}()
	w.runs.Wait()
	cancel()
	_ = w.q.Close()
	w.reg.leave()
}
