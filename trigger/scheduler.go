package trigger

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/agentcraftlab/agentcraft/controlplane"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/workflow"
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
	// Sweep is how often the scheduler finishes the ticks won but never
	// started (store.Triggers.Unstarted): the winning process stopped, or
	// its start failed for a reason that may pass, before it recorded a
	// run or an error. It also is how old such a fire must be, so that a
	// tick another live process is starting is left to it. Default 1 min.
	Sweep time.Duration
	// StartRetry is how long after a tick was won the sweep keeps
	// retrying a start that fails for a reason that may pass (the
	// database busy or out of reach); past it the error is recorded on
	// the fire. A start that cannot succeed (target gone, definition or
	// input invalid, storage quota) records its error at once. Default
	// 1 h.
	StartRetry time.Duration
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Logger receives operational logs. Default: discard.
	Logger *slog.Logger
}

// Scheduler fires the schedule triggers of every workspace. Any number of
// processes may run one over the same database: each tick is recorded
// once (store.Triggers.Fire) and only the process that records it starts
// the run. The run's id is derived from (trigger, tick), so when that
// process stops before recording the run, any scheduler's sweep starts
// it, or finds it started, and the tick still has exactly one run.
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
	if s.opts.Sweep <= 0 {
		s.opts.Sweep = time.Minute
	}
	if s.opts.StartRetry <= 0 {
		s.opts.StartRetry = time.Hour
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
// while no scheduler ran follow each trigger's misfire policy), finishes
// the ticks won but never started (the sweep) and starts the loop, which
// runs until ctx ends or Stop. A second Start is an error.
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
	s.sweep(ctx)
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

// loop sleeps until the next tick of any schedule, the next change check
// or the next sweep, whichever is first; no query runs between them.
func (s *Scheduler) loop(ctx context.Context) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	nextCheck := s.opts.Now().Add(s.opts.Recheck)
	nextSweep := s.opts.Now().Add(s.opts.Sweep)
	for {
		now := s.opts.Now()
		wake := nextCheck
		if nextSweep.Before(wake) {
			wake = nextSweep
		}
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
		if !s.opts.Now().Before(nextSweep) {
			s.sweep(ctx)
			nextSweep = s.opts.Now().Add(s.opts.Sweep)
		}
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
// records it on the fire (startFire).
func (s *Scheduler) fire(ctx context.Context, t store.Trigger, tick time.Time, missed int) {
	f, won, err := s.svc.st.Triggers().Fire(ctx, store.TriggerFire{WorkspaceID: t.WorkspaceID, TriggerID: t.ID, Tick: tick, Missed: missed, Owner: s.opts.Owner})
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
	s.startFire(context.WithoutCancel(ctx), t, f, false)
}

// sweep finishes the fires that won a tick at least Sweep ago and
// recorded neither a run nor an error: their process stopped before it
// did, or the start failed for a reason that may pass. Every scheduler
// sweeps; the run id derived from (trigger, tick) makes the schedulers
// sweeping one fire, and its winner if it created the run before it
// stopped, agree on one run.
func (s *Scheduler) sweep(ctx context.Context) {
	tr := s.svc.st.Triggers()
	fires, err := tr.Unstarted(ctx, s.opts.Now().Add(-s.opts.Sweep), 100)
	if err != nil {
		if ctx.Err() == nil {
			s.opts.Logger.Warn("trigger_sweep_failed", "err", err)
		}
		return
	}
	for _, f := range fires {
		if ctx.Err() != nil {
			return
		}
		t, err := tr.Get(ctx, f.WorkspaceID, f.TriggerID)
		if errors.Is(err, store.ErrNotFound) {
			continue // deleted meanwhile, and its fires with it
		}
		if err != nil {
			s.opts.Logger.Warn("trigger_sweep_failed", "trigger_id", f.TriggerID, "workspace_id", f.WorkspaceID, "tick", f.Tick, "err", err)
			continue
		}
		s.startFire(ctx, t, f, true)
	}
}

// runID is the id of the run that trigger's tick starts: the same in
// every process, so that starting it twice is store.ErrConflict.
func runID(triggerID string, tick time.Time) string {
	tick = store.Timestamp(tick)
	return store.IDFor(tick, "trigger-fire/"+triggerID+"/"+strconv.FormatInt(tick.UnixMicro(), 10))
}

// startFire starts the run of the won fire f under the id derived from
// its tick and records the run on f. A start that cannot succeed records
// its error instead; one that may succeed later leaves f open for a
// sweep to retry, the sweep recording the error once StartRetry has
// passed since the tick was won. swept is set when f comes from the sweep:
// its winner may have created the run already, and a trigger disabled
// since starts no run.
func (s *Scheduler) startFire(ctx context.Context, t store.Trigger, f store.TriggerFire, swept bool) {
	id := runID(t.ID, f.Tick)
	log := s.opts.Logger.With("trigger_id", t.ID, "workspace_id", t.WorkspaceID, "tick", f.Tick, "run_id", id)
	runs := s.svc.st.Runs()
	err := s.createRun(ctx, t, id, swept)
	switch {
	case err == nil:
		f.RunID = id
	case errors.Is(err, store.ErrConflict):
		// Another scheduler's sweep started it meanwhile: record the run
		// that exists.
		if _, gerr := runs.Get(ctx, t.WorkspaceID, id); gerr != nil {
			log.Warn("trigger_run_retry", "err", errors.Join(err, gerr))
			return
		}
		f.RunID = id
	case lasting(err) || swept && s.opts.Now().Sub(f.CreatedAt) >= s.opts.StartRetry:
		f.Error = err.Error()
		log.Error("trigger_run_failed", "err", err)
	default:
		// Left open: a sweep retries it with the same id.
		log.Warn("trigger_run_retry", "err", err, "retry_in", s.opts.Sweep)
		return
	}
	if f.RunID != "" {
		log.Info("trigger_fired", "missed", f.Missed, "swept", swept)
	}
	if err := s.svc.st.Triggers().FireDone(ctx, f); err != nil {
		// The fire stays open: a sweep finds the run by its id and
		// records it.
		log.Warn("trigger_fire_record_failed", "err", err)
	}
}

// createRun starts t's run as run id; nil means the run exists. A
// swept fire's run may exist already (its winner created it, then
// stopped). A run created but not enqueued is nil too: it is queued, and
// controlplane.Service.Sweep (or ResumeOwned at the next start) wakes it.
func (s *Scheduler) createRun(ctx context.Context, t store.Trigger, id string, swept bool) error {
	if swept {
		_, err := s.svc.st.Runs().Get(ctx, t.WorkspaceID, id)
		if err == nil {
			return nil // the winner created it before it stopped
		}
		if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if !t.Enabled {
			return errDisabled
		}
	}
	input, err := inputOf(t.Input)
	if err != nil {
		return &FieldError{Field: "input", Message: "the trigger's input is not JSON: " + err.Error()}
	}
	run, err := s.svc.start(ctx, t, id, input)
	if run.ID != "" {
		if err != nil {
			s.opts.Logger.Warn("trigger_run_not_enqueued", "trigger_id", t.ID, "workspace_id", t.WorkspaceID, "run_id", run.ID, "err", err)
		}
		return nil
	}
	return err
}

// errDisabled is recorded on a fire the sweep found unstarted after its
// trigger was disabled: a person stopped the trigger, so none of its runs
// start now.
var errDisabled = errors.New("trigger: the trigger was disabled before this tick's run started")

// lasting reports whether a failed start would fail the same way if
// retried: the target or the workspace is gone, the definition or the
// input is invalid, the workspace's storage quota is reached.
func lasting(err error) bool {
	var invalid *workflow.InvalidError
	var field *FieldError
	return errors.Is(err, errDisabled) || errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrInvalid) ||
		errors.Is(err, controlplane.ErrStorageQuota) || errors.As(err, &invalid) || errors.As(err, &field)
}
