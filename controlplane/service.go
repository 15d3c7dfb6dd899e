package controlplane

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/agentcraftlab/agentcraft/internal/metrics"
	"github.com/agentcraftlab/agentcraft/internal/tracing"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/workflow"
)

// Options configure a Service.
type Options struct {
	// Owner identifies this executor in run leases. It should survive a
	// restart (so a restarted process knows its own runs): default the
	// AGENTCRAFT_WORKER_ID environment variable, else the host name.
	Owner string
	// LeaseTTL is how long a lease lasts without a heartbeat; another
	// worker may take a run over after it. Default 30 s.
	LeaseTTL time.Duration
	// Enqueue hands a run to the job queue; wake is set when a parked run
	// is resumed (the queue must not drop it as a duplicate of the job that
	// parked it). Nil runs it in a goroutine of this process (tests).
	Enqueue func(ctx context.Context, workspaceID, runID string, wake bool) error
	// EnqueueAt queues a check of a waiting run at a human node's
	// deadline. Nil uses a timer in this process.
	EnqueueAt func(ctx context.Context, workspaceID, runID string, at time.Time) error
	// SingleProcess: this process is the only executor (SQLite), so on
	// ResumeOwned it takes back every live run at once instead of waiting
	// for leases to expire.
	SingleProcess bool
	Logger        *slog.Logger
	// Audit records the workflow changes (workflow.create, .update,
	// .restore, .delete); pass platform.Platform.RecordAudit, which fills
	// the workspace and actor from the request. Default: record nothing.
	Audit func(context.Context, store.AuditEvent)
	// MaxStepsCeiling refuses (at save, Start and Rerun) a definition
	// whose settings.max_steps is above it. Default DefaultMaxStepsCeiling;
	// -1 means no ceiling.
	MaxStepsCeiling int
	// TimeoutCeiling refuses a definition whose settings.timeout is above
	// it. Default DefaultTimeoutCeiling; -1 means no ceiling.
	TimeoutCeiling time.Duration
	// StorageQuota caps the bytes of run data (checkpoint outputs and
	// events) one workspace stores: Start and Rerun refuse a run in a
	// workspace at or over it (ErrStorageQuota), and a run whose next
	// checkpoint would cross it fails. Default DefaultStorageQuota; -1
	// means no quota.
	StorageQuota int64
	// StorageRecheck is how long a workspace's measured run data is
	// trusted before it is measured again (adding what this process's
	// runs wrote meanwhile): measuring scans every checkpoint, about
	// 0.5 s for 170 MB on SQLite. Default 30 s.
	StorageRecheck time.Duration
	// Changed, when set, is told of every run this service parked
	// (waiting), ended (succeeded, failed, failed at a deadline) or
	// canceled, once the row says so; package task maps the run to its
	// task's status and answers the asker. A crash before the call loses
	// it, so its user also reconciles from the rows.
	Changed func(ctx context.Context, run store.Run)
	// Metrics counts the runs this service executes (by status, with
	// their durations) and their nodes (by kind and status). Default nil:
	// nothing is counted.
	Metrics *metrics.Metrics
}

// Service creates, executes, resumes, cancels and re-runs durable workflow
// runs. A run is a row plus checkpoints: Execute claims the run's lease,
// replays saved node outputs, saves each new one before the next node
// starts, and records the outcome. It is safe for concurrent use.
type Service struct {
	st     store.Store
	engine *workflow.Engine
	opts   Options
	broker *broker

	plans sync.Map // sha256 of a definition → *workflow.Plan

	usageMu sync.Mutex             // guards usage
	usage   map[string]storedUsage // workspace id → its measured run data

	// handingBack is set by HandBack: runs stop at their next checkpoint
	// and go back to the queue.
	handingBack atomic.Bool

	mu     sync.Mutex
	active map[string]*execution // runs executing here; guarded by mu
	wg     sync.WaitGroup        // goroutine-executed runs and pending deadline checks
	// checks are the deadline checks of waiting runs not due yet
	// (checkAt without Options.EnqueueAt); guarded by mu.
	checks map[*time.Timer]bool
}

// New returns a Service.
func New(st store.Store, engine *workflow.Engine, opts Options) *Service {
	if opts.Owner == "" {
		opts.Owner = os.Getenv("AGENTCRAFT_WORKER_ID")
	}
	if opts.Owner == "" {
		opts.Owner, _ = os.Hostname()
	}
	if opts.LeaseTTL <= 0 {
		opts.LeaseTTL = 30 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Audit == nil {
		opts.Audit = func(context.Context, store.AuditEvent) {}
	}
	opts.MaxStepsCeiling = orDefault(opts.MaxStepsCeiling, DefaultMaxStepsCeiling)
	opts.TimeoutCeiling = orDefault(opts.TimeoutCeiling, DefaultTimeoutCeiling)
	opts.StorageQuota = orDefault(opts.StorageQuota, DefaultStorageQuota)
	if opts.StorageRecheck <= 0 {
		opts.StorageRecheck = 30 * time.Second
	}
	return &Service{st: st, engine: engine, opts: opts, broker: newBroker(), active: map[string]*execution{},
		usage: map[string]storedUsage{}}
}

// Engine returns the workflow engine.
func (s *Service) Engine() *workflow.Engine { return s.engine }

// Plan parses and prepares a definition, caching plans by content.
func (s *Service) Plan(def json.RawMessage) (*workflow.Plan, error) {
	sum := sha256.Sum256(def)
	if p, ok := s.plans.Load(sum); ok {
		return p.(*workflow.Plan), nil
	}
	d, err := workflow.Parse(def)
	if err != nil {
		return nil, err
	}
	if probs := s.Ceilings().Check(d.Settings); len(probs) > 0 {
		return nil, &workflow.InvalidError{Problems: probs}
	}
	p, err := s.engine.Prepare(d)
	if err != nil {
		return nil, err
	}
	s.plans.Store(sum, p)
	return p, nil
}

// RunInput is what a run starts from: {{input}} and {{vars.<name>}}.
type RunInput struct {
	Input any            `json:"input"`
	Vars  map[string]any `json:"vars,omitempty"`
}

// StartRequest starts a run of a definition.
type StartRequest struct {
	// ID, when set, is the run's id instead of a new one: a caller that
	// may start the same run twice (package trigger, retrying a tick
	// whose first start may or may not have happened) names it up front,
	// and a second Start of it is store.ErrConflict and starts nothing.
	// It must be a UUID in canonical form (store.NewID, store.IDFor).
	ID              string
	WorkspaceID     string
	WorkflowID      string // empty for an unsaved definition
	WorkflowVersion int
	Definition      json.RawMessage
	Input           RunInput
	// TaskID names the task whose plan the run executes (package task).
	TaskID string
	// TriggerID names the trigger whose tick or webhook started the run
	// (package trigger); its agent nodes then act as system:trigger:<id>.
	TriggerID string
}

// Start validates the definition, records a queued run and enqueues it.
// A definition that does not validate gives *workflow.InvalidError and
// records nothing. When the run is recorded but enqueueing fails, Start
// returns the run with the error: the run exists, queued, and Sweep (or
// ResumeOwned at the next start) wakes it.
func (s *Service) Start(ctx context.Context, req StartRequest) (store.Run, error) {
	if err := checkRunID(req.ID); err != nil {
		return store.Run{}, err
	}
	if _, err := s.Plan(req.Definition); err != nil {
		return store.Run{}, err
	}
	if err := s.checkQuota(ctx, req.WorkspaceID); err != nil {
		return store.Run{}, err
	}
	in, err := json.Marshal(req.Input)
	if err != nil {
		return store.Run{}, fmt.Errorf("encode input: %w", err)
	}
	// The starting request's trace context goes with the run ("" while
	// tracing is off), for the process that executes it (traceRun).
	tp, ts := tracing.Carry(ctx)
	run, err := s.st.Runs().Create(ctx, store.Run{ID: req.ID, WorkspaceID: req.WorkspaceID, WorkflowID: req.WorkflowID,
		WorkflowVersion: req.WorkflowVersion, Definition: req.Definition, Status: store.RunQueued, Input: in, TaskID: req.TaskID, TriggerID: req.TriggerID,
		TraceParent: tp, TraceState: ts})
	if err != nil {
		return store.Run{}, err
	}
	return run, s.enqueue(ctx, run.WorkspaceID, run.ID, false)
}

// checkRunID refuses a caller-given run id that is not a canonical UUID,
// the form every run id has (so it cannot collide with, or pass for, a
// path segment or another kind of id).
func checkRunID(id string) error {
	if id == "" {
		return nil
	}
	if u, err := uuid.Parse(id); err != nil || u.String() != id {
		return fmt.Errorf("%w: run id %q is not a UUID in canonical form; leave StartRequest.ID empty for a new id, or derive one with store.IDFor", store.ErrInvalid, id)
	}
	return nil
}

func (s *Service) enqueue(ctx context.Context, workspaceID, runID string, wake bool) error {
	if s.opts.Enqueue != nil {
		return s.opts.Enqueue(ctx, workspaceID, runID, wake)
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := s.Execute(context.WithoutCancel(ctx), workspaceID, runID); err != nil {
			s.opts.Logger.ErrorContext(ctx, "run failed to execute", "run", runID, "err", err)
		}
	}()
	return nil
}

// Wait waits for runs executed in goroutines (Options.Enqueue nil). The
// deadline checks of waiting runs that are not due yet are dropped, not
// waited for: an approval may be days away, and a waiting run whose
// deadline passes while no process watches fails when it is next executed
// or answered (Resume checks the deadline).
func (s *Service) Wait() {
	s.mu.Lock()
	for t := range s.checks {
		if t.Stop() {
			delete(s.checks, t)
			s.wg.Done()
		}
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// Execute runs (or resumes) a run to its end or its next wait. It is the
// job queue's handler and is idempotent: a run that is final, waiting or
// leased to a live executor is left alone (nil error).
func (s *Service) Execute(ctx context.Context, workspaceID, runID string) error {
	return s.execute(ctx, workspaceID, runID, false)
}

func (s *Service) execute(ctx context.Context, workspaceID, runID string, force bool) error {
	// One execution per run per process: the queue's job and ResumeOwned
	// may both reach a run after a restart, and the lease (held by this
	// same owner) would let both in.
	x := &execution{workspaceID: workspaceID}
	s.mu.Lock()
	if _, busy := s.active[runID]; busy {
		s.mu.Unlock()
		return nil
	}
	s.active[runID] = x
	s.mu.Unlock()
	var ended store.Run // what end recorded, for Options.Changed
	defer func() {
		s.mu.Lock()
		delete(s.active, runID)
		s.mu.Unlock()
		// Told only now, when this process no longer holds the run: a
		// hook that resumes it (an approval decided while it parked)
		// must find it free to execute again.
		if ended.ID != "" {
			s.changed(context.WithoutCancel(ctx), ended)
		}
	}()

	runs := s.st.Runs()
	run, err := runs.Claim(ctx, workspaceID, runID, s.opts.Owner, s.opts.LeaseTTL, force)
	if errors.Is(err, store.ErrConflict) {
		if run.Status == store.RunWaiting {
			return s.expireWait(ctx, run)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("claim run %s: %w", runID, err)
	}
	ctx, span := traceRun(ctx, run)
	defer span.End()
	plan, err := s.Plan(run.Definition)
	if err != nil {
		s.observe(workflow.Event{Type: workflow.EventRunFinished, Status: workflow.StatusFailed}) // the engine never ran
		return s.end(ctx, run, workflow.Outcome{Status: workflow.StatusFailed, Error: "definition: " + err.Error()}, nil, &ended)
	}
	var in RunInput
	if err := json.Unmarshal(run.Input, &in); err != nil {
		s.observe(workflow.Event{Type: workflow.EventRunFinished, Status: workflow.StatusFailed}) // the engine never ran
		return s.end(ctx, run, workflow.Outcome{Status: workflow.StatusFailed, Error: "input: " + err.Error()}, nil, &ended)
	}

	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	s.mu.Lock()
	x.cancel = cancel
	s.mu.Unlock()
	if s.handingBack.Load() {
		// Claimed while this process stops (a job fetched just before):
		// back to the queue before any node runs.
		return s.handBack(ctx, run)
	}

	s.broker.open(runID)
	defer s.broker.close(runID)
	rec, err := newRecorder(ctx, runs, workspaceID, runID, func(ev workflow.Event) {
		x.saw(ev)
		s.broker.publish(runID, ev)
		s.observe(ev)
	})
	if err != nil {
		return err
	}
	// After each checkpoint, a run of a stopping process stops: what it
	// did is saved, and the next executor resumes after it.
	rec.saved = func() {
		if s.handingBack.Load() {
			cancel(errHandBack)
		}
	}
	if err := s.limitStorage(ctx, rec); err != nil {
		return err
	}
	hbDone := make(chan struct{})
	go s.heartbeat(runCtx, run, cancel, hbDone)
	var actor string
	if run.TriggerID != "" {
		actor = "trigger:" + run.TriggerID
	}
	out := s.engine.Run(runCtx, plan, workflow.Request{RunID: runID, WorkspaceID: workspaceID, Actor: actor,
		Input: in.Input, Vars: in.Vars, Checkpoints: rec, Emit: rec.Emit})
	cancel(nil)
	<-hbDone
	if out.Status == workflow.StatusCanceled {
		cause := context.Cause(runCtx)
		switch {
		case errors.Is(cause, errCanceled), errors.Is(cause, errLeaseLost):
			// Canceled through the API (the row says so already) or taken
			// over by another executor: nothing more to record here.
			_ = rec.Flush(context.WithoutCancel(ctx))
			return nil
		case errors.Is(cause, errHandBack), ctx.Err() != nil && s.handingBack.Load():
			// This process is stopping: stopped at a checkpoint, or (the
			// queue's grace over) canceled mid-node, whose work the next
			// executor redoes.
			_ = rec.Flush(context.WithoutCancel(ctx))
			if err := s.handBack(ctx, run); err != nil {
				return errors.Join(err, ctx.Err())
			}
			return nil
		case ctx.Err() != nil:
			// This process is stopping: keep the run running with its
			// checkpoints; a restart or another worker resumes it.
			_ = rec.Flush(context.WithoutCancel(ctx))
			return ctx.Err()
		}
	}
	if rec.lost.Load() {
		// Another executor saved a node this one ran: the run is its
		// now, and it records the outcome.
		_ = rec.Flush(context.WithoutCancel(ctx))
		return nil
	}
	return s.end(context.WithoutCancel(ctx), run, out, rec, &ended)
}

var (
	errCanceled  = errors.New("run canceled through the API")
	errLeaseLost = errors.New("run lease lost to another executor")
	errHandBack  = errors.New("run handed back: this process is stopping")
)

// execution is a run executing in this process.
type execution struct {
	workspaceID string
	// cancel stops the engine; nil until it runs. Guarded by Service.mu.
	cancel context.CancelCauseFunc
	// node is the key of the node that started last and has not ended
	// ("" between nodes), for the workers registry.
	node atomic.Pointer[string]
}

// saw follows the node the run executes.
func (x *execution) saw(ev workflow.Event) {
	switch ev.Type {
	case workflow.EventNodeStarted:
		key := ev.Key
		x.node.Store(&key)
	case workflow.EventNodeFinished, workflow.EventNodeFailed:
		if cur := x.node.Load(); cur != nil && *cur == ev.Key {
			x.node.Store(nil)
		}
	}
}

// HandBack makes this process give its runs back to the queue instead of
// finishing them, as a stopping worker does once its shutdown timeout has
// passed: each run executing here stops after its next checkpoint, so no
// finished node runs again, releases its lease and is enqueued again, so
// another executor resumes it at once instead of after the lease expires.
// A run claimed after HandBack goes back before any node runs. A node in
// flight finishes first; when the queue then cancels it (Stop's grace
// over) the run goes back all the same and the next executor redoes that
// node. HandBack cannot be undone: call it when stopping.
func (s *Service) HandBack() {
	s.handingBack.Store(true)
}

// handBack releases the run's lease and enqueues it again. The queue's job
// of this execution then completes: the new job resumes the run.
func (s *Service) handBack(ctx context.Context, run store.Run) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if _, err := s.st.Runs().Release(ctx, run.WorkspaceID, run.ID, s.opts.Owner); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return nil // canceled or taken over meanwhile: not ours to hand back
		}
		return fmt.Errorf("hand back run %s: %w", run.ID, err)
	}
	if err := s.enqueue(ctx, run.WorkspaceID, run.ID, true); err != nil {
		// Queued without a job: the sweeper of a live process wakes it.
		return fmt.Errorf("hand back run %s: enqueue: %w", run.ID, err)
	}
	s.opts.Logger.InfoContext(ctx, "run_handed_back", "run_id", run.ID, "workspace_id", run.WorkspaceID)
	return nil
}

// Active returns the runs executing in this process, with the node each
// executes, for the workers registry.
func (s *Service) Active() []store.HeldRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]store.HeldRun, 0, len(s.active))
	for id, x := range s.active {
		h := store.HeldRun{WorkspaceID: x.workspaceID, RunID: id}
		if n := x.node.Load(); n != nil {
			h.Node = *n
		}
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b store.HeldRun) int { return strings.Compare(a.RunID, b.RunID) })
	return out
}

// Owner is this executor's name in run leases.
func (s *Service) Owner() string { return s.opts.Owner }

// heartbeat renews the lease every third of its TTL; when the run was
// canceled or another executor took it, it stops this execution.
func (s *Service) heartbeat(ctx context.Context, run store.Run, cancel context.CancelCauseFunc, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(s.opts.LeaseTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			got, err := s.st.Runs().Claim(ctx, run.WorkspaceID, run.ID, s.opts.Owner, s.opts.LeaseTTL, false)
			if errors.Is(err, store.ErrConflict) {
				if got.Status == store.RunCanceled {
					cancel(errCanceled)
				} else {
					cancel(errLeaseLost)
				}
				return
			}
		}
	}
}

// end records a run's outcome; *changed gets the row it stored.
func (s *Service) end(ctx context.Context, run store.Run, out workflow.Outcome, rec *recorder, changed *store.Run) error {
	traceOutcome(ctx, out)
	if rec != nil {
		// The events first, the row next, run_finished last (see
		// recorder): whoever sees the run end finds the row settled.
		if err := rec.FlushPending(ctx); err != nil {
			s.opts.Logger.WarnContext(ctx, "run events not saved", "run", run.ID, "err", err)
		}
		defer func() {
			if err := rec.Flush(ctx); err != nil {
				s.opts.Logger.WarnContext(ctx, "run events not saved", "run", run.ID, "err", err)
			}
		}()
	}
	runs := s.st.Runs()
	live := []store.RunStatus{store.RunRunning, store.RunQueued}
	var (
		err   error
		ended store.Run
	)
	switch out.Status {
	case workflow.StatusWaiting:
		key := out.WaitingKey
		ended, err = runs.Transition(ctx, run.WorkspaceID, run.ID, live, store.RunWaiting, store.RunUpdate{WaitingNode: &key})
		if err == nil && out.Wait != nil && out.Wait.Deadline != nil {
			err = s.checkAt(ctx, run.WorkspaceID, run.ID, *out.Wait.Deadline)
		}
	default:
		u := store.RunUpdate{}
		if out.Status == workflow.StatusSucceeded {
			b, merr := json.Marshal(out.Output)
			if merr != nil {
				msg := "encode output: " + merr.Error()
				u.Error = &msg
				out.Status = workflow.StatusFailed
			} else {
				u.Output = b
			}
		}
		if out.Error != "" {
			u.Error = &out.Error
		}
		ended, err = runs.Transition(ctx, run.WorkspaceID, run.ID, live, store.RunStatus(out.Status), u)
	}
	if errors.Is(err, store.ErrConflict) {
		return nil // canceled meanwhile: the cancel wins
	}
	if ended.ID != "" && (ended.Status == store.RunWaiting || ended.Status.Final()) {
		*changed = ended // the row says so, whatever a deadline's scheduling answered
	}
	return err
}

// changed tells Options.Changed of a run's new status.
func (s *Service) changed(ctx context.Context, run store.Run) {
	if s.opts.Changed != nil {
		s.opts.Changed(ctx, run)
	}
}

// checkAt arranges for Execute to look at a waiting run at its deadline.
func (s *Service) checkAt(ctx context.Context, workspaceID, runID string, at time.Time) error {
	if s.opts.EnqueueAt != nil {
		return s.opts.EnqueueAt(ctx, workspaceID, runID, at)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.checks == nil {
		s.checks = make(map[*time.Timer]bool)
	}
	s.wg.Add(1)
	var t *time.Timer
	t = time.AfterFunc(time.Until(at), func() {
		s.mu.Lock()
		delete(s.checks, t)
		s.mu.Unlock()
		defer s.wg.Done()
		if err := s.Execute(context.WithoutCancel(ctx), workspaceID, runID); err != nil {
			s.opts.Logger.ErrorContext(ctx, "deadline check failed", "run", runID, "err", err)
		}
	})
	s.checks[t] = true
	return nil
}

// expireWait fails a waiting run whose human node's deadline has passed;
// before the deadline (an early or repeated wake) it does nothing. The
// deadline is the one in the run's latest waiting_for_input event for the
// node it waits on.
func (s *Service) expireWait(ctx context.Context, run store.Run) error {
	deadline, err := s.waitDeadline(ctx, run)
	if err != nil || deadline == nil || time.Now().Before(*deadline) {
		return err
	}
	msg := fmt.Sprintf("no answer at human node %q before its deadline %s", run.WaitingNode, deadline.Format(time.RFC3339))
	failed, err := s.st.Runs().Transition(ctx, run.WorkspaceID, run.ID, []store.RunStatus{store.RunWaiting}, store.RunFailed, store.RunUpdate{Error: &msg})
	if errors.Is(err, store.ErrConflict) {
		return nil // answered or canceled meanwhile
	}
	if err == nil {
		s.changed(ctx, failed)
	}
	return err
}

func (s *Service) waitDeadline(ctx context.Context, run store.Run) (*time.Time, error) {
	w, err := s.WaitOf(ctx, run)
	if err != nil || w == nil {
		return nil, err
	}
	return w.Deadline, nil
}

// WaitOf returns what a waiting run waits for: the request of the
// latest waiting_for_input event of the node execution it is parked on
// (a human node's prompt and deadline, an approval node's approval id);
// nil when there is none.
func (s *Service) WaitOf(ctx context.Context, run store.Run) (*workflow.Wait, error) {
	var (
		wait  *workflow.Wait
		after int64
	)
	for {
		evs, err := s.st.Runs().Events(ctx, run.WorkspaceID, run.ID, after, 1000)
		if err != nil {
			return nil, err
		}
		if len(evs) == 0 {
			return wait, nil
		}
		for _, se := range evs {
			after = se.Seq
			if se.Type != string(workflow.EventWaiting) {
				continue
			}
			var ev struct {
				Key  string        `json:"key"`
				Data workflow.Wait `json:"data"`
			}
			if json.Unmarshal(se.Data, &ev) == nil && ev.Key == run.WaitingNode {
				wait = &ev.Data
			}
		}
	}
}

// ErrNotWaiting is returned by Resume for a run that does not wait.
var ErrNotWaiting = errors.New("run is not waiting for input")

// ErrDeadlinePassed is returned by Resume when the human node's timeout
// has passed; the run is failed.
var ErrDeadlinePassed = errors.New("the human node's deadline has passed; the run failed")

// Resume answers the human node a waiting run is parked on and queues the
// run again. It is idempotent: answering a run that already resumed (or
// finished) changes nothing and returns the run with ErrNotWaiting.
func (s *Service) Resume(ctx context.Context, workspaceID, runID string, answer any) (store.Run, error) {
	runs := s.st.Runs()
	run, err := runs.Get(ctx, workspaceID, runID)
	if err != nil {
		return store.Run{}, err
	}
	if run.Status != store.RunWaiting {
		return run, ErrNotWaiting
	}
	if d, err := s.waitDeadline(ctx, run); err == nil && d != nil && time.Now().After(*d) {
		if err := s.expireWait(ctx, run); err != nil {
			return run, err
		}
		run, _ = runs.Get(ctx, workspaceID, runID)
		return run, ErrDeadlinePassed
	}
	key := run.WaitingNode
	out, err := json.Marshal(answer)
	if err != nil {
		return run, fmt.Errorf("encode answer: %w", err)
	}
	err = runs.Checkpoint(ctx, workspaceID, store.Checkpoint{RunID: runID, Key: key, NodeID: nodeOfKey(key), Output: out, CreatedAt: time.Now()}, nil)
	if err != nil && !errors.Is(err, store.ErrConflict) {
		return run, err
	}
	empty := ""
	run, err = runs.Transition(ctx, workspaceID, runID, []store.RunStatus{store.RunWaiting}, store.RunQueued, store.RunUpdate{WaitingNode: &empty})
	if errors.Is(err, store.ErrConflict) {
		return run, ErrNotWaiting
	}
	if err != nil {
		return run, err
	}
	return run, s.enqueue(ctx, workspaceID, runID, true)
}

// nodeOfKey returns the node id of an execution key: "l#2/it[3]/draft" →
// "draft".
func nodeOfKey(key string) string {
	key, _, _ = strings.Cut(key, workflow.JournalSep)
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		key = key[i+1:]
	}
	return key
}

// Cancel cancels a live or waiting run; a final run is returned as it is.
func (s *Service) Cancel(ctx context.Context, workspaceID, runID string) (store.Run, error) {
	msg := "canceled through the API"
	run, err := s.st.Runs().Transition(ctx, workspaceID, runID,
		[]store.RunStatus{store.RunQueued, store.RunRunning, store.RunWaiting}, store.RunCanceled, store.RunUpdate{Error: &msg})
	if errors.Is(err, store.ErrConflict) {
		return run, nil
	}
	if err != nil {
		return run, err
	}
	s.mu.Lock()
	var stop context.CancelCauseFunc
	if x := s.active[runID]; x != nil {
		stop = x.cancel
	}
	s.mu.Unlock()
	if stop != nil {
		stop(errCanceled)
	}
	s.changed(ctx, run)
	return run, nil
}

// Rerun starts a new run of the same definition and input that reuses the
// saved outputs of every node not downstream of from, so their models are
// not called again.
func (s *Service) Rerun(ctx context.Context, workspaceID, runID, from string) (store.Run, error) {
	runs := s.st.Runs()
	old, err := runs.Get(ctx, workspaceID, runID)
	if err != nil {
		return store.Run{}, err
	}
	plan, err := s.Plan(old.Definition)
	if err != nil {
		return store.Run{}, err
	}
	redo := plan.Downstream(from)
	if redo == nil {
		return store.Run{}, fmt.Errorf("%w: the run's workflow has no node %q", store.ErrInvalid, from)
	}
	if err := s.checkQuota(ctx, workspaceID); err != nil {
		return store.Run{}, err
	}
	cps, err := runs.Checkpoints(ctx, workspaceID, runID)
	if err != nil {
		return store.Run{}, err
	}
	run, err := runs.Create(ctx, store.Run{WorkspaceID: workspaceID, WorkflowID: old.WorkflowID, WorkflowVersion: old.WorkflowVersion,
		Definition: old.Definition, Status: store.RunQueued, Input: old.Input})
	if err != nil {
		return store.Run{}, err
	}
	for _, cp := range cps {
		if redo[cp.NodeID] || keyTouches(cp.Key, redo) {
			continue
		}
		cp.RunID = run.ID
		if err := runs.Checkpoint(ctx, workspaceID, cp, nil); err != nil {
			return run, fmt.Errorf("copy checkpoint %s: %w", cp.Key, err)
		}
	}
	return run, s.enqueue(ctx, workspaceID, run.ID, false)
}

// keyTouches reports whether an execution key lies inside a compound that
// is re-run ("l#2/draft" when l is).
func keyTouches(key string, redo map[string]bool) bool {
	for _, part := range strings.Split(key, "/") {
		id := part
		if i := strings.IndexAny(id, "#["); i >= 0 {
			id = id[:i]
		}
		if redo[id] {
			return true
		}
	}
	return false
}

// ResumeOwned executes, at once, the live runs this executor held when it
// stopped (every live run when SingleProcess), instead of waiting for
// their leases and the queue's rescuer. Runs execute in goroutines; it
// returns after starting them.
func (s *Service) ResumeOwned(ctx context.Context) (int, error) {
	live, err := s.st.Runs().Live(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, run := range live {
		if run.Executor != "" {
			continue // an external executor's (worker API)
		}
		mine := run.LeaseOwner == s.opts.Owner
		if !s.opts.SingleProcess && !mine && run.LeaseOwner != "" {
			continue
		}
		n++
		s.wg.Add(1)
		go func(run store.Run) {
			defer s.wg.Done()
			if err := s.execute(ctx, run.WorkspaceID, run.ID, s.opts.SingleProcess || mine); err != nil {
				s.opts.Logger.ErrorContext(ctx, "resumed run failed to execute", "run", run.ID, "err", err)
			}
		}(run)
	}
	return n, nil
}

// Sweep wakes the runs no executor is running: running runs whose lease
// expired (their worker died and no restart took them back) and queued
// runs older than a lease whose job may have been lost. The wake goes
// through the queue, so any live worker may take them; the lease keeps
// it to one. It returns how many it woke.
func (s *Service) Sweep(ctx context.Context) (int, error) {
	live, err := s.st.Runs().Live(ctx)
	if err != nil {
		return 0, err
	}
	now := time.Now()
	n := 0
	for _, run := range live {
		if run.Executor != "" {
			continue // an external executor's (worker API): its lease is its own
		}
		expired := run.Status == store.RunRunning && run.LeaseUntil != nil && now.After(*run.LeaseUntil)
		stale := run.Status == store.RunQueued && run.LeaseOwner == "" && now.Sub(run.UpdatedAt) > s.opts.LeaseTTL
		if !expired && !stale {
			continue
		}
		if err := s.enqueue(ctx, run.WorkspaceID, run.ID, true); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// SweepEvery runs Sweep every interval until ctx ends.
func (s *Service) SweepEvery(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if n, err := s.Sweep(ctx); err != nil && ctx.Err() == nil {
				s.opts.Logger.Warn("run_sweep_failed", "err", err)
			} else if n > 0 {
				s.opts.Logger.Info("runs_woken", "count", n)
			}
		}
	}
}

// Events streams a run's events with Seq > after: the stored ones, then
// (when the run executes in this process) the live tail, else by polling
// the store until the run is final or waiting. It ends when the run does
// or ctx ends.
func (s *Service) Events(ctx context.Context, workspaceID, runID string, after int64, yield func(workflow.Event) bool) error {
	runs := s.st.Runs()
	for {
		// Subscribe first, so nothing falls between the store and the feed;
		// and read the run's status before its events: a run that was
		// already final or waiting had saved all its events, so once they
		// are read the stream is complete.
		backlog, ch, unsub, live := s.broker.subscribe(runID, after)
		var settled bool
		if !live {
			run, err := runs.Get(ctx, workspaceID, runID)
			if err != nil {
				return err
			}
			settled = run.Status.Final() || run.Status == store.RunWaiting
		}
		stored, err := runs.Events(ctx, workspaceID, runID, after, 0)
		if err != nil {
			if unsub != nil {
				unsub()
			}
			return err
		}
		for i, se := range stored {
			var ev workflow.Event
			if err := json.Unmarshal(se.Data, &ev); err != nil {
				continue
			}
			ev.Seq = se.Seq
			after = ev.Seq
			if !yield(ev) {
				if unsub != nil {
					unsub()
				}
				return nil
			}
			// A run that parked and was resumed has a run_finished of
			// status waiting among its events; the stream goes on past it
			// to what the resumed execution recorded.
			if ev.Type == workflow.EventRunFinished && (ev.Status != workflow.StatusWaiting || i == len(stored)-1) {
				if unsub != nil {
					unsub()
				}
				return nil
			}
		}
		if live {
			done, err := s.tail(ctx, backlog, ch, &after, yield)
			unsub()
			if done || err != nil {
				return err
			}
			continue
		}
		if len(stored) == 1000 {
			continue // a full page: read on at once
		}
		if settled {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// tail yields the backlog and live events after *after; done is true when
// the stream should end (run finished or the consumer stopped).
func (s *Service) tail(ctx context.Context, backlog []workflow.Event, ch chan workflow.Event, after *int64, yield func(workflow.Event) bool) (bool, error) {
	send := func(ev workflow.Event) (bool, bool) {
		if ev.Seq <= *after {
			return false, true
		}
		*after = ev.Seq
		if !yield(ev) {
			return true, false
		}
		return ev.Type == workflow.EventRunFinished, true
	}
	for _, ev := range backlog {
		if done, ok := send(ev); done || !ok {
			return true, nil
		}
	}
	for {
		select {
		case <-ctx.Done():
			return true, nil
		case ev, open := <-ch:
			if !open {
				return false, nil // feed closed: read the rest from the store
			}
			if done, ok := send(ev); done || !ok {
				return true, nil
			}
		}
	}
}
