package trigger

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/agentcraftlab/agentcraft/store"
)

// SchedulerOptions configure a Scheduler.
type SchedulerOptions struct {
	// Owner names this process in the fire rows it wins. Default: the
	// AGENTCRAFT_WORKER_ID environment variable, else the host name and
	// process id.
	Owner string
	// Recheck is how often the scheduler asks the store whether any
	// trigger changed (one cheap query), reloading the schedules when one
	// did. Default 2 s.
	Recheck time.Duration
	// MisfireAfter is how late a tick may be found and still fire as
	// itself: a tick older than that was missed (the process was down or
	// stalled) and follows the trigger's misfire policy. Default 1 min.
	MisfireAfter time.Duration
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Logger receives operational logs. Default: discard.
	Logger *slog.Logger
}

// Scheduler fires the schedule triggers of every workspace. Any number of
// processes may run one over the same database: each tick is recorded
// once (store.Triggers.Fire) and only the process that records it starts
// the run.
type Scheduler struct {
	svc  *Service
	opts SchedulerOptions

	mu      sync.Mutex // guards started, stopped and cancel
	started bool
	stopped bool
	cancel  context.CancelFunc
	wg      sync.WaitGroup // the loop goroutine

	// Owned by the loop goroutine (and Start before it runs).
	version string
	entries map[string]*entry // trigger id → its state
}

// entry is a schedule trigger as the loop keeps it.
type entry struct {
	t     store.Trigger
	sched Schedule
	// after is the last tick handled: the next one is sched.Next(after).
	after time.Time
}

// NewScheduler returns a Scheduler over svc's triggers.
func NewScheduler(svc *Service, opts *SchedulerOptions) *Scheduler {
	s := &Scheduler{svc: svc, entries: map[string]*entry{}}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.Owner == "" {
		s.opts.Owner = os.Getenv("AGENTCRAFT_WORKER_ID")
	}
	if s.opts.Owner == "" {
		host, _ := os.Hostname()
		s.opts.Owner = host + "/" + strconv.Itoa(os.Getpid())
	}
	if s.opts.Recheck <= 0 {
		s.opts.Recheck = 2 * time.Second
	}
	if s.opts.MisfireAfter <= 0 {
		s.opts.MisfireAfter = time.Minute
	}
	if s.opts.Now == nil {
		s.opts.Now = time.Now
	}
	if s.opts.Logger == nil {
		s.opts.Logger = slog.New(slog.DiscardHandler)
	}
	return s
}

// Start loads the schedules, fires what is due now (the ticks missed
// while no scheduler ran follow each trigger's misfire policy) and starts
// the loop, which runs until ctx ends or Stop. A second Start is an error.
func (s *Scheduler) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return errors.New("trigger: scheduler started already")
	}
	s.started = true
	if err := s.reload(ctx, true); err != nil {
		return err
	}
	s.fireDue(ctx)
	ctx, s.cancel = context.WithCancel(ctx)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.loop(ctx)
	}()
	return nil
}

// Stop ends the loop and waits for it (a run being started finishes
// starting). Idempotent.
func (s *Scheduler) Stop() {
	s.mu.Lock()
	if s.stopped || s.cancel == nil {
		s.stopped = true
		s.mu.Unlock()
		return
	}
	s.stopped = true
	s.cancel()
	s.mu.Unlock()
	s.wg.Wait()
}

// loop sleeps until the next tick of any schedule or the next change
// check, whichever is first; no query runs between them.
func (s *Scheduler) loop(ctx context.Context) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	nextCheck := s.opts.Now().Add(s.opts.Recheck)
	for {
		now := s.opts.Now()
		wake := nextCheck
		for _, e := range s.entries {
			if n := e.sched.Next(e.after); !n.IsZero() && n.Before(wake) {
				wake = n
			}
		}
		timer.Reset(max(wake.Sub(now), 0))
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		if !s.opts.Now().Before(nextCheck) {
			if err := s.reload(ctx, false); err != nil && ctx.Err() == nil {
				s.opts.Logger.Warn("trigger_reload_failed", "err", err)
			}
			nextCheck = s.opts.Now().Add(s.opts.Recheck)
		}
		s.fireDue(ctx)
	}
}

// reload reads the schedules when their version changed (always when
// first). A trigger new to this process, or changed, starts from its last
// fired tick or its last change, whichever is later: so after downtime the
// ticks since the last fire count as missed, and a changed schedule does
// not count the ticks before the change.
func (s *Scheduler) reload(ctx context.Context, first bool) error {
	tr := s.svc.st.Triggers()
	v, err := tr.Version(ctx)
	if err != nil {
		return err
	}
	if !first && v == s.version {
		return nil
	}
	list, err := tr.Schedules(ctx)
	if err != nil {
		return err
	}
	seen := make(map[string]bool, len(list))
	for _, t := range list {
		seen[t.ID] = true
		if e, ok := s.entries[t.ID]; ok && e.t.UpdatedAt.Equal(t.UpdatedAt) {
			continue
		}
		sched, err := ParseSchedule(t.Schedule, t.Timezone)
		if err != nil {
			s.opts.Logger.Warn("trigger_schedule_invalid", "trigger_id", t.ID, "workspace_id", t.WorkspaceID, "err", err)
			delete(s.entries, t.ID)
			continue
		}
		after := t.UpdatedAt
		fires, err := tr.Fires(ctx, t.WorkspaceID, t.ID, 1)
		if err != nil {
			return err
		}
		if len(fires) > 0 && fires[0].Tick.After(after) {
			after = fires[0].Tick
		}
		s.entries[t.ID] = &entry{t: t, sched: sched, after: after}
	}
	for id := range s.entries {
		if !seen[id] {
			delete(s.entries, id)
		}
	}
	s.version = v
	return nil
}

// fireDue handles every trigger's ticks up to now: those at most
// MisfireAfter late fire each as themselves; older ones were missed and
// fire once (catch_up_once, as the latest of them) or not at all (skip).
func (s *Scheduler) fireDue(ctx context.Context) {
	now := s.opts.Now()
	cut := now.Add(-s.opts.MisfireAfter)
	for _, e := range s.entries {
		if ctx.Err() != nil {
			return
		}
		first := e.sched.Next(e.after)
		if first.IsZero() || first.After(now) {
			continue
		}
		if first.Before(cut) {
			if last := e.sched.lastAtOrBefore(e.after, cut); !last.IsZero() {
				if e.t.Misfire == store.MisfireCatchUpOnce {
					missed := e.sched.countIn(e.after, cut, 100000)
					s.fire(ctx, e.t, last, missed)
				} else {
					s.opts.Logger.Info("trigger_ticks_skipped", "trigger_id", e.t.ID, "workspace_id", e.t.WorkspaceID,
						"from", first, "to", last, "policy", string(store.MisfireSkip))
				}
				e.after = last
			}
		}
		for tick := e.sched.Next(e.after); !tick.IsZero() && !tick.After(now); tick = e.sched.Next(tick) {
			s.fire(ctx, e.t, tick, 0)
			e.after = tick
		}
	}
}

// fire records the tick and, when this process won it, starts the run and
// records the run (or why none started) on the fire.
func (s *Scheduler) fire(ctx context.Context, t store.Trigger, tick time.Time, missed int) {
	tr := s.svc.st.Triggers()
	f, won, err := tr.Fire(ctx, store.TriggerFire{WorkspaceID: t.WorkspaceID, TriggerID: t.ID, Tick: tick, Missed: missed, Owner: s.opts.Owner})
	if err != nil {
		if ctx.Err() == nil {
			s.opts.Logger.Warn("trigger_fire_failed", "trigger_id", t.ID, "workspace_id", t.WorkspaceID, "tick", tick, "err", err)
		}
		return
	}
	if !won {
		return
	}
	// The tick is ours: start its run even if the process is stopping.
	ctx = context.WithoutCancel(ctx)
	input, err := inputOf(t.Input)
	var run store.Run
	if err == nil {
		run, err = s.svc.start(ctx, t, input)
	}
	if err != nil {
		f.Error = err.Error()
		s.opts.Logger.Error("trigger_run_failed", "trigger_id", t.ID, "workspace_id", t.WorkspaceID, "tick", tick, "err", err)
	} else {
		f.RunID = run.ID
		s.opts.Logger.Info("trigger_fired", "trigger_id", t.ID, "workspace_id", t.WorkspaceID, "tick", tick, "run_id", run.ID, "missed", missed)
	}
	if err := tr.FireDone(ctx, f); err != nil {
		s.opts.Logger.Warn("trigger_fire_record_failed", "trigger_id", t.ID, "tick", tick, "err", err)
	}
}
