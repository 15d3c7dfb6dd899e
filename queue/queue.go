// Package queue runs workflow runs as durable jobs on River
// (github.com/riverqueue/river), on SQLite for the single-machine
// `agentcraft serve` and on PostgreSQL when `agentcraft worker` processes
// scale out.
//
// A job carries only the run's identity (RunArgs); the run's state lives in
// the store as a row plus checkpoints. If a process dies mid-run, River's
// rescuer makes the job available again and another worker resumes the run
// from its last checkpoint, so a Handler must be safe to call again for the
// same run.
//
//	db, err := database.OpenSQLite(ctx, "data/agentcraft.db", nil) // shared with the store
//	err = queue.Migrate(ctx, db, "")
//	q, err := queue.New(queue.Config{DB: db}, runWorkflow)
//	defer q.Close()
//	if err := q.Start(ctx); err != nil { ... }
//	err = q.EnqueueRun(ctx, queue.RunArgs{WorkspaceID: ws, RunID: id})
//	...
//	stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
//	defer cancel()
//	err = q.Stop(stopCtx) // waits for running jobs, then cancels them
//
// Migrate creates River's own tables (river_job, river_leader, river_queue,
// river_client, river_migration …) in the database; they sit beside the
// app's tables, which goose tracks in goose_db_version, and share no names
// with them. River works on the database.DB the store and the search
// engine use: on SQLite its one-connection writer (River's concurrent
// internals queue there behind the store's writes instead of failing each
// other with SQLITE_BUSY), on PostgreSQL the shared pool, of which it keeps
// one connection for LISTEN.
//
// SQLite has no LISTEN/NOTIFY, so workers poll for new jobs every
// PollInterval (20ms by default): that interval is the added latency between
// EnqueueRun and the handler starting.
package queue

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"github.com/agentcraftlab/agentcraft/internal/database"
)

// RunArgs is the job that executes one workflow run.
type RunArgs struct {
	WorkspaceID string `json:"workspace_id"`
	RunID       string `json:"run_id"`
	// Wake, when set, tells this enqueue apart from earlier ones of the
	// same run (uniqueness is by arguments): a run resumed right after it
	// parked would otherwise be dropped as a duplicate of the job that
	// parked it, which River still counts as running for ~100 ms. Set it
	// to a fresh value (such as the resume's time) when waking a run.
	Wake string `json:"wake,omitempty"`
}

// Kind is the River job kind. It is stored in every job row: never change it.
func (RunArgs) Kind() string { return "workflow_run" }

// IngestArgs is the job that ingests uploaded files into a knowledge base
// (one store.IngestJob).
type IngestArgs struct {
	WorkspaceID string `json:"workspace_id"`
	JobID       string `json:"job_id"`
	// Resume, when set, tells this enqueue apart from the job's first one
	// (uniqueness is by arguments): after a crash River still counts the
	// first as running until its rescuer gives up on it, an hour or more
	// later. Set it to a fresh value when requeueing an interrupted job.
	Resume string `json:"resume,omitempty"`
}

// Kind is the River job kind. It is stored in every job row: never change it.
func (IngestArgs) Kind() string { return "kb_ingest" }

// IngestHandler executes an ingest job. Returning an error makes River retry
// it like a run; the handler must tolerate being run again for a job it
// partly did.
type IngestHandler func(ctx context.Context, args IngestArgs) error

// Handler executes a run. Returning an error makes River retry the run with
// backoff, up to Config.MaxAttempts attempts in all. When ctx is cancelled
// because the queue is stopping, return an error wrapping ctx.Err(): River
// then makes the job available again without counting the attempt as a
// failure.
type Handler func(ctx context.Context, args RunArgs) error

// Config configures Open. Zero fields take their defaults; Open does not
// modify the caller's Config.
type Config struct {
	// DB is the database River works on, shared with the store (see
	// package database). Required; Migrate must have run on it.
	DB *database.DB
	// Schema is the PostgreSQL schema holding River's tables, created by
	// the caller. Default: DB's schema, else the connection's search_path.
	// Must be empty on SQLite.
	Schema string
	// Workers caps the runs this process executes at once. Default 10.
	Workers int
	// JobTimeout cancels a run's context after this long. Default 1h (a
	// run is long); -1 means no timeout.
	JobTimeout time.Duration
	// RescueAfter is how long a job may stay running before River assumes
	// its worker died and makes it available again (its handler may then
	// run twice). It must exceed JobTimeout. Default River's: JobTimeout +
	// 1h, or 1h when JobTimeout is -1.
	RescueAfter time.Duration
	// MaxAttempts is the number of attempts, the first included, before a
	// failing run is discarded. Default 5.
	MaxAttempts int
	// RetryDelay returns how long to wait before retrying after attempt
	// (1 for the first) failed. Default River's backoff: attempt⁴ seconds
	// with 10% jitter (1s, 16s, 81s, …).
	RetryDelay func(attempt int) time.Duration
	// PollInterval is how often workers look for new jobs. Default 20ms on
	// SQLite, which has no LISTEN/NOTIFY, and 1s on PostgreSQL, where new
	// jobs are announced and polling is only the fallback.
	PollInterval time.Duration
	// InsertOnly makes a queue that only enqueues, for an API process whose
	// runs execute in separate workers: Start does nothing and the
	// Handler may be nil.
	InsertOnly bool
	// Logger receives River's own log, with River's messages and levels:
	// client start and stop and failed attempts ("Job errored; retrying")
	// at Info, internal faults at Error. Nil discards, so a Handler should
	// log its own failures.
	Logger *slog.Logger
	// JobRetention is how long River keeps finished jobs (completed,
	// cancelled and discarded alike) before its job cleaner deletes them:
	// retention.queue_jobs. 0 keeps River's defaults (24h for completed
	// and cancelled, 7d for discarded); -1 keeps them forever.
	JobRetention time.Duration
	// Ingest executes knowledge-base ingest jobs in this process; nil
	// means this queue's workers take no ingest jobs (EnqueueIngest still
	// works).
	Ingest IngestHandler

	// testOnly sets River's TestOnly, which skips the jittered start of
	// its maintenance services.
	testOnly bool
}

// Queue enqueues runs and, unless InsertOnly, executes them. It is safe for
// concurrent use.
type Queue struct {
	client     riverClient
	insertOnly bool
	logger     *slog.Logger

	mu      sync.Mutex // guards started
	started bool

	closeOnce sync.Once
}

// riverClient is the part of *river.Client[TTx] the Queue uses; it hides
// the driver's transaction type (pgx.Tx or *sql.Tx).
type riverClient interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	StopAndCancel(ctx context.Context) error
	Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
}

const (
	defaultWorkers     = 10
	defaultJobTimeout  = time.Hour
	defaultMaxAttempts = 5
	// defaultSQLitePoll is the fallback on SQLite, where jobs enqueued by
	// this process start at once (see inProcessSQLite): it finds those of
	// another process (a CLI command on the same file) and retries made
	// available by River's scheduler.
	defaultSQLitePoll   = time.Second
	defaultPostgresPoll = time.Second
	// cancelGrace bounds how long Stop and Close wait for handlers to
	// return after their contexts were cancelled.
	cancelGrace = 10 * time.Second
)

// Migrate brings River's tables in db up to date, in schema on
// PostgreSQL ("" for db's schema, else the search_path), and returns the
// number of River migrations it applied. It is idempotent; run it before
// New. On PostgreSQL concurrent callers (serve and workers
// starting at once) wait for each other.
func Migrate(ctx context.Context, db *database.DB, schema string) (applied int, err error) {
	if db == nil {
		return 0, errors.New("queue: migrate: db is nil; open the database with database.Open")
	}
	cfg := &rivermigrate.Config{Logger: db.Logger(), Schema: schemaFor(db, schema)}
	switch db.Kind() {
	case database.SQLite:
		if schema != "" {
			return 0, errors.New("queue: migrate: schema is set but the database is SQLite; leave it empty")
		}
		return migrate(ctx, riversqlite.New(db.Writer()), cfg)
	case database.Postgres:
		err = withMigrateLock(ctx, db.Pool(), func() error {
			applied, err = migrate(ctx, riverpgxv5.New(db.Pool()), cfg)
			return err
		})
		return applied, err
	}
	return 0, errors.New("queue: migrate: db names no database")
}

// schemaFor is River's schema on db: schema when set, else db's.
func schemaFor(db *database.DB, schema string) string {
	if schema == "" {
		return db.Schema()
	}
	return schema
}

// New builds the queue on cfg.DB, whose River tables Migrate has brought
// up to date. h executes runs; it may be nil only when cfg.InsertOnly is
// set. Call Start to begin working jobs and Close to stop them; the caller
// keeps owning the DB and closes it after the queue.
func New(cfg Config, h Handler) (*Queue, error) {
	if cfg.DB == nil {
		return nil, errors.New("queue: new: Config.DB is nil; pass the database the store uses (database.Open)")
	}
	if err := cfg.validate(h); err != nil {
		return nil, err
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cfg.Schema = schemaFor(cfg.DB, cfg.Schema)
	rc, err := cfg.riverConfig(cfg.DB.Kind(), h, logger)
	if err != nil {
		return nil, err
	}
	q := &Queue{insertOnly: cfg.InsertOnly, logger: logger}
	switch cfg.DB.Kind() {
	case database.SQLite:
		q.client, err = river.NewClient[*sql.Tx](inProcessSQLite{riversqlite.New(cfg.DB.Writer())}, rc)
	case database.Postgres:
		q.client, err = river.NewClient[pgx.Tx](riverpgxv5.New(cfg.DB.Pool()), rc)
	}
	if err != nil {
		return nil, fmt.Errorf("queue: new client: %w", err)
	}
	return q, nil
}

// migrate brings River's tables up to date and returns the number of
// versions applied.
func migrate[TTx any](ctx context.Context, driver riverdriver.Driver[TTx], cfg *rivermigrate.Config) (int, error) {
	m, err := rivermigrate.New(driver, cfg)
	if err != nil {
		return 0, fmt.Errorf("queue: migrate: %w", err)
	}
	res, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	if err != nil {
		return 0, fmt.Errorf("queue: migrate: %w", err)
	}
	return len(res.Versions), nil
}

func (c *Config) validate(h Handler) error {
	switch {
	case h == nil && !c.InsertOnly:
		return errors.New("queue: open: Handler is nil; pass one or set InsertOnly")
	case c.Workers < 0:
		return fmt.Errorf("queue: Workers is %d; set it to 0 (default 10) or more", c.Workers)
	case c.JobTimeout < -1:
		return fmt.Errorf("queue: JobTimeout is %v; set it to 0 (default 1h), -1 (none) or a positive duration", c.JobTimeout)
	case c.JobRetention < -1:
		return fmt.Errorf("queue: JobRetention is %v; set it to 0 (River's defaults), -1 (keep) or a positive duration", c.JobRetention)
	case c.RescueAfter < 0:
		return fmt.Errorf("queue: RescueAfter is %v; set it to 0 (default) or a positive duration", c.RescueAfter)
	case c.MaxAttempts < 0:
		return fmt.Errorf("queue: MaxAttempts is %d; set it to 0 (default 5) or more", c.MaxAttempts)
	case c.PollInterval < 0:
		return fmt.Errorf("queue: PollInterval is %v; set it to 0 (default) or a positive duration", c.PollInterval)
	case c.Schema != "" && c.DB.Kind() == database.SQLite:
		return errors.New("queue: Schema is set but the database is SQLite; leave Schema empty on SQLite")
	}
	return nil
}

// riverConfig translates c, with defaults filled, into River's Config.
func (c *Config) riverConfig(kind database.Kind, h Handler, logger *slog.Logger) (*river.Config, error) {
	rc := &river.Config{
		Logger:               logger,
		JobTimeout:           c.JobTimeout,
		RescueStuckJobsAfter: c.RescueAfter,
		MaxAttempts:          c.MaxAttempts,
		Schema:               c.Schema,
		TestOnly:             c.testOnly,
	}
	if rc.JobTimeout == 0 {
		rc.JobTimeout = defaultJobTimeout
	}
	if c.JobRetention != 0 {
		rc.CompletedJobRetentionPeriod = c.JobRetention
		rc.CancelledJobRetentionPeriod = c.JobRetention
		rc.DiscardedJobRetentionPeriod = c.JobRetention
	}
	if rc.MaxAttempts == 0 {
		rc.MaxAttempts = defaultMaxAttempts
	}
	if rc.RescueStuckJobsAfter != 0 && rc.JobTimeout > 0 && rc.RescueStuckJobsAfter <= rc.JobTimeout {
		return nil, fmt.Errorf("queue: RescueAfter %v must exceed JobTimeout %v, or a live run is handed to a second worker", rc.RescueStuckJobsAfter, rc.JobTimeout)
	}
	if c.RetryDelay != nil {
		rc.RetryPolicy = retryPolicy(c.RetryDelay)
	}
	rc.FetchPollInterval = c.PollInterval
	if rc.FetchPollInterval == 0 {
		rc.FetchPollInterval = defaultPostgresPoll
		if kind == database.SQLite {
			rc.FetchPollInterval = defaultSQLitePoll
		}
	}
	// The cooldown spaces a producer's fetches, and so delays the fetch
	// an enqueue triggers by up to its length; on PostgreSQL River also
	// sends at most one insert notification per cooldown per queue, and a
	// job inserted within it waits for the next poll. At River's default
	// (100ms) runs enqueued one after another started after ~1s at p90 on
	// PostgreSQL and ~10ms at p50 on SQLite (TestEnqueueToStartLatency);
	// at the minimum (1ms) ~30ms and ~2ms. Fetches stay cheap: a producer
	// with no free worker slot skips them, so a burst of enqueues is not a
	// burst of (on SQLite, write) transactions.
	rc.FetchCooldown = river.FetchCooldownMin
	if c.InsertOnly {
		// FetchCooldown matters here too: it paces this client's insert
		// notifications to the workers.
		return rc, nil
	}

	workers := c.Workers
	if workers == 0 {
		workers = defaultWorkers
	}
	rc.Queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: workers}}
	rc.Workers = river.NewWorkers()
	if err := river.AddWorkerSafely(rc.Workers, river.WorkFunc(func(ctx context.Context, job *river.Job[RunArgs]) error {
		return h(ctx, job.Args)
	})); err != nil {
		return nil, fmt.Errorf("queue: register worker: %w", err)
	}
	if c.Ingest != nil {
		ingest := c.Ingest
		if err := river.AddWorkerSafely(rc.Workers, river.WorkFunc(func(ctx context.Context, job *river.Job[IngestArgs]) error {
			return ingest(ctx, job.Args)
		})); err != nil {
			return nil, fmt.Errorf("queue: register ingest worker: %w", err)
		}
	}
	return rc, nil
}

// inProcessSQLite is River's SQLite driver without its listener. That
// listener emulates LISTEN/NOTIFY with an outbox table it polls every
// 50 ms, and a producer without one polled every 20 ms for the same
// latency: 70 queries a second and about 280 KB of garbage a second on a
// server doing nothing, most of the idle resident set's growth. Without a
// listener River enters poll-only mode and hands each job this process
// enqueues (outside a transaction, as EnqueueRun does) straight to its
// local producer, so a run starts as soon as it is enqueued and the poll
// is only a fallback (defaultSQLitePoll).
type inProcessSQLite struct{ *riversqlite.Driver }

func (inProcessSQLite) SupportsListener() bool     { return false }
func (inProcessSQLite) SupportsListenNotify() bool { return false }

// retryPolicy is a River ClientRetryPolicy that waits delay(attempt).
type retryPolicy func(attempt int) time.Duration

func (p retryPolicy) NextRetry(job *rivertype.JobRow) time.Time {
	// River rejects a time before its own "now" (taken before this call)
	// and falls back to its default backoff; never go below zero.
	return time.Now().Add(max(p(job.Attempt), 0))
}

// Start begins working jobs in the background. ctx bounds only the
// start-up (its values reach handlers); cancelling it later does not stop
// the queue: call Stop. Start on an InsertOnly queue does nothing.
func (q *Queue) Start(ctx context.Context) error {
	if q.insertOnly {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("queue: start: %w", err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	// River hard-stops (cancels running jobs) when its start context ends;
	// detaching it leaves the graceful path to Stop.
	if err := q.client.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("queue: start: %w", err)
	}
	q.started = true
	return nil
}

// uniqueStates are the job states in which a second EnqueueRun of the same
// run is skipped: every state before the job finishes. After it completes,
// fails for good or is cancelled, the run may be enqueued again (resuming
// a parked run does that).
var uniqueStates = []rivertype.JobState{
	rivertype.JobStateAvailable,
	rivertype.JobStatePending,
	rivertype.JobStateRetryable,
	rivertype.JobStateRunning,
	rivertype.JobStateScheduled,
}

// EnqueueRun makes the run available to a worker. Enqueuing a run that
// already has an unfinished job (waiting, running or waiting to retry) does
// nothing, so a caller that is unsure whether it enqueued may do it again.
//
// "Running" lasts until River records the job's completion, shortly after
// the handler returns (~100ms on PostgreSQL, whose completer batches): a
// run enqueued again in that window, such as a parked run resumed at once,
// is skipped too, unless args.Wake tells it apart (see RunArgs.Wake).
func (q *Queue) EnqueueRun(ctx context.Context, args RunArgs) error {
	return q.EnqueueRunAt(ctx, args, time.Time{})
}

// EnqueueRunAt is EnqueueRun for a job that becomes available at at (zero:
// now), such as the check of a human node's deadline.
func (q *Queue) EnqueueRunAt(ctx context.Context, args RunArgs, at time.Time) error {
	if args.RunID == "" {
		return errors.New("queue: enqueue run: RunID is empty; set the id of the run to execute")
	}
	if args.WorkspaceID == "" {
		return fmt.Errorf("queue: enqueue run %s: WorkspaceID is empty; set the run's workspace", args.RunID)
	}
	res, err := q.client.Insert(ctx, args, &river.InsertOpts{
		UniqueOpts:  river.UniqueOpts{ByArgs: true, ByState: uniqueStates},
		ScheduledAt: at,
	})
	if err != nil {
		return fmt.Errorf("queue: enqueue run %s: %w", args.RunID, err)
	}
	if res.UniqueSkippedAsDuplicate {
		q.logger.DebugContext(ctx, "run_already_queued", "run_id", args.RunID, "workspace_id", args.WorkspaceID)
	}
	return nil
}

// EnqueueIngest makes an ingest job available to a worker. Enqueuing a job
// that is still waiting or running does nothing.
func (q *Queue) EnqueueIngest(ctx context.Context, args IngestArgs) error {
	if args.JobID == "" || args.WorkspaceID == "" {
		return errors.New("queue: enqueue ingest: JobID and WorkspaceID are both required")
	}
	if _, err := q.client.Insert(ctx, args, &river.InsertOpts{
		UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: uniqueStates},
	}); err != nil {
		return fmt.Errorf("queue: enqueue ingest %s: %w", args.JobID, err)
	}
	return nil
}

// Stop stops fetching jobs and waits for running ones to return. When ctx
// ends first, it cancels their contexts, waits up to 10s more for them to
// return, and reports ctx's error; cancelled runs are made available again
// for the next worker. Stop is idempotent and does nothing on a queue that
// was not started.
func (q *Queue) Stop(ctx context.Context) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.started {
		return nil
	}
	err := q.client.Stop(ctx)
	if err == nil {
		q.started = false
		return nil
	}
	if ctx.Err() == nil {
		return fmt.Errorf("queue: stop: %w", err)
	}
	hardCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelGrace)
	defer cancel()
	if herr := q.client.StopAndCancel(hardCtx); herr != nil {
		return fmt.Errorf("queue: stop: running jobs ignored cancellation: %w", herr)
	}
	q.started = false
	return fmt.Errorf("queue: stop: cancelled running jobs: %w", err)
}

// Close cancels any jobs still running (call Stop first for a graceful
// end). The database stays open. It is idempotent.
func (q *Queue) Close() error {
	var err error
	q.closeOnce.Do(func() {
		q.mu.Lock()
		started := q.started
		q.mu.Unlock()
		if started {
			ctx, cancel := context.WithTimeout(context.Background(), cancelGrace)
			defer cancel()
			if serr := q.client.StopAndCancel(ctx); serr != nil {
				err = fmt.Errorf("queue: close: %w", serr)
			}
			q.mu.Lock()
			q.started = false
			q.mu.Unlock()
		}
	})
	return err
}

var _ river.ClientRetryPolicy = retryPolicy(nil)
