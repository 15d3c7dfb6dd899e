package retention

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/agentcraftlab/agentcraft/internal/database"
)

// ServiceOptions configures a Service. Nil means defaults.
type ServiceOptions struct {
	// Interval is how often the pruner runs. Default 1h; negative: never
	// (only the checkpoints run).
	Interval time.Duration
	// CheckpointInterval is how often, on SQLite, the WAL is checkpointed
	// and truncated between prunes, which keeps it small even when
	// readers hold snapshots past SQLite's own automatic checkpoints.
	// Default 5m; negative: never.
	CheckpointInterval time.Duration
	// Logger gets the pruner's reports and failures. Nil discards.
	Logger *slog.Logger
	// Reported, when set, gets every Report (tests, metrics).
	Reported func(Report)
}

// advisoryKey is the PostgreSQL advisory lock that lets one process at a
// time prune: serve and every worker run a Service, and the one that gets
// the lock prunes while the others skip that round.
const advisoryKey = 0x61635f7265746e // "ac_retn"

// Service runs a Pruner on a schedule. Start it once; Stop waits for the
// run in progress.
type Service struct {
	p    *Pruner
	opts ServiceOptions
	log  *slog.Logger

	// mu guards cancel and started.
	mu      sync.Mutex
	cancel  context.CancelFunc
	started bool
	wg      sync.WaitGroup
}

// NewService returns a service running p.
func NewService(p *Pruner, opts *ServiceOptions) *Service {
	s := &Service{p: p}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.Interval == 0 {
		s.opts.Interval = time.Hour
	}
	if s.opts.CheckpointInterval == 0 {
		s.opts.CheckpointInterval = 5 * time.Minute
	}
	s.log = s.opts.Logger
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s
}

// Start begins the schedule; the first prune runs one Interval after
// Start, so a restart loop never prunes on every start.
func (s *Service) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return errors.New("retention: service already started")
	}
	s.started = true
	ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if s.opts.Interval > 0 {
		s.wg.Go(func() { s.every(ctx, s.opts.Interval, s.prune) })
	}
	if s.opts.CheckpointInterval > 0 && s.p.db.Kind() == database.SQLite {
		s.wg.Go(func() { s.every(ctx, s.opts.CheckpointInterval, s.checkpoint) })
	}
	return nil
}

// Stop ends the schedule and waits for a run in progress. It is
// idempotent.
func (s *Service) Stop() {
	s.mu.Lock()
	cancel := s.cancel
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	s.wg.Wait()
}

func (s *Service) every(ctx context.Context, d time.Duration, fn func(context.Context)) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fn(ctx)
		}
	}
}

func (s *Service) checkpoint(ctx context.Context) {
	if _, err := s.p.db.Checkpoint(ctx); err != nil && ctx.Err() == nil {
		s.log.Warn("wal_checkpoint_failed", "error", err)
	}
}

func (s *Service) prune(ctx context.Context) {
	r, ran, err := s.RunOnce(ctx, false)
	if !ran {
		return
	}
	if err != nil && ctx.Err() == nil {
		s.log.Error("retention_failed", "error", err)
	}
	if r.Total() > 0 {
		s.log.Info("retention_done", "rows", r.Total(), "took", r.Took.Round(time.Millisecond), "vacuumed_pages", r.VacuumedPages)
	}
	if s.opts.Reported != nil {
		s.opts.Reported(r)
	}
}

// RunOnce runs the pruner now. On PostgreSQL it first takes the advisory
// lock without waiting; ran is false when another process holds it (that
// process is pruning).
func (s *Service) RunOnce(ctx context.Context, dryRun bool) (r Report, ran bool, err error) {
	return runLocked(ctx, s.p, dryRun)
}

// RunLocked is Pruner.Run under the PostgreSQL advisory lock that
// Services share (on SQLite, one process holds the database). ran is
// false when another process holds the lock.
func RunLocked(ctx context.Context, p *Pruner, dryRun bool) (Report, bool, error) {
	return runLocked(ctx, p, dryRun)
}

func runLocked(ctx context.Context, p *Pruner, dryRun bool) (Report, bool, error) {
	if p.db.Kind() != database.Postgres {
		r, err := p.Run(ctx, dryRun)
		return r, true, err
	}
	conn, err := p.db.Pool().Acquire(ctx)
	if err != nil {
		return Report{}, false, fmt.Errorf("retention: lock: %w", err)
	}
	defer conn.Release()
	var got bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, int64(advisoryKey)).Scan(&got); err != nil {
		return Report{}, false, fmt.Errorf("retention: lock: %w", err)
	}
	if !got {
		return Report{}, false, nil
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, int64(advisoryKey))
	r, err := p.Run(ctx, dryRun)
	return r, true, err
}
