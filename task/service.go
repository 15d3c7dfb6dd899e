package task

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentcraftlab/agentcraft/controlplane"
	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/tool"
)

// Options configure a Service.
type Options struct {
	Policy Policy
	// WorkspacePolicies, by workspace name, replace Policy for those
	// workspaces (agentcraft.yaml's workspaces[].tasks).
	WorkspacePolicies map[string]Policy
	// Router picks the agent of a task. Nil routes over BuiltinAgents.
	Router *Router
	// Extractor reads plain-text requests. Nil refuses them (ErrNoModel);
	// structured intents still work.
	Extractor Extractor
	// Judge scores agents' judged canHandle rules; nil leaves those rules
	// out of routing.
	Judge Judge
	// Model ("provider/model") words the answers of the built-in agents'
	// plans; empty answers with the steps' raw output.
	Model string
	// Senders deliver notifications, by channel ("line").
	Senders map[string]Sender
	// Audit records decisions (approval.approve, approval.reject) and
	// compensations. Nil records nothing.
	Audit func(context.Context, store.AuditEvent)
	// Every is how often Start reconciles (expires approvals, resumes
	// runs whose approval was decided while nobody was listening, settles
	// tasks whose run ended, delivers notifications). Default 2 s.
	Every  time.Duration
	Logger *slog.Logger
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Service is the task control plane: Submit turns a request into a task,
// routes it to an agent, and starts the run of the agent's plan; Decide
// applies a person's approval; Compensate undoes what a task did. The
// runs are the controlplane's durable runs (leases, heartbeats,
// checkpoints, parking without a goroutine), whose tool and approval
// nodes go through the Ledger.
type Service struct {
	st      store.Store
	runs    *controlplane.Service
	ledger  *Ledger
	router  *Router
	extract Extractor
	judge   Judge
	model   string
	policy  policies
	senders map[string]Sender
	audit   func(context.Context, store.AuditEvent)
	every   time.Duration
	log     *slog.Logger
	now     func() time.Time

	// retryMu guards retry: per notification, the failed tries so far
	// and when the next may be made (exponential backoff, this process).
	retryMu sync.Mutex
	retry   map[string]retryState

	stopOnce sync.Once
	stop     chan struct{}
	wg       sync.WaitGroup
}

type retryState struct {
	tries int
	next  time.Time
}

// New returns the task service over st, starting runs on runs, whose
// engine's Services.Actions must be ledger. With runs and ledger nil
// (the CLI) it reads tasks and records decisions, which a server's
// reconciler then applies; Submit, Compensate and Start need both.
func New(st store.Store, runs *controlplane.Service, ledger *Ledger, opts *Options) (*Service, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	s := &Service{st: st, runs: runs, ledger: ledger, router: o.Router, extract: o.Extractor, judge: o.Judge, model: o.Model,
		policy: newPolicies(st, o.Policy, o.WorkspacePolicies), senders: map[string]Sender{}, retry: map[string]retryState{}, audit: o.Audit, every: o.Every, log: o.Logger,
		now: o.Now, stop: make(chan struct{})}
	for k, v := range o.Senders {
		s.senders[k] = v
	}
	if s.router == nil {
		r, err := NewRouter(BuiltinAgents()...)
		if err != nil {
			return nil, err
		}
		s.router = r
	}
	if s.every <= 0 {
		s.every = 2 * time.Second
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s, nil
}

// Router returns the service's router (GET /api/agents lists its agents).
func (s *Service) Router() *Router { return s.router }

// SetSender registers the sender of a channel; call it before Start.
func (s *Service) SetSender(channel string, snd Sender) { s.senders[channel] = snd }

// maxRequestText bounds a request's text.
const maxRequestText = 8000

// ErrInvalid marks a request the service cannot take as given; the
// message names the field.
var ErrInvalid = errors.New("task: invalid request")

// Submit makes a task of the request, plans it and starts its run. A
// redelivered request (same source and source ref) returns the task made
// the first time, marked Duplicate. An ambiguous request ends the task
// cancelled with needs_clarification and Outcome.Question set; so does a
// plan that needs an answer first (a reminder without a time).
func (s *Service) Submit(ctx context.Context, r Request) (Outcome, error) {
	if s.runs == nil || s.ledger == nil {
		return Outcome{}, errNoRuns
	}
	if r.WorkspaceID == "" {
		return Outcome{}, fmt.Errorf("%w: no workspace", ErrInvalid)
	}
	if r.Source == "" {
		return Outcome{}, fmt.Errorf("%w: source is empty; name the channel (line, web, api)", ErrInvalid)
	}
	text := strings.TrimSpace(r.Text)
	if text == "" && r.Intent == nil {
		return Outcome{}, fmt.Errorf("%w: text is empty; say what you need, or send a structured intent", ErrInvalid)
	}
	if r.Ceiling != "" && !store.Capability(r.Ceiling).Valid() {
		return Outcome{}, fmt.Errorf("%w: capability ceiling %q is not low, medium or high", ErrInvalid, r.Ceiling)
	}
	if utf8.RuneCountInString(text) > maxRequestText {
		return Outcome{}, fmt.Errorf("%w: text is longer than %d characters", ErrInvalid, maxRequestText)
	}
	// A redelivery is answered before the model reads the text again;
	// Create's own conflict covers two deliveries racing past this.
	if r.SourceRef != "" {
		if t, err := s.st.Tasks().GetBySource(ctx, r.WorkspaceID, r.Source, r.SourceRef); err == nil {
			return s.duplicate(ctx, t)
		} else if !errors.Is(err, store.ErrNotFound) {
			return Outcome{}, err
		}
	}
	var in Intent
	if r.Intent != nil {
		in = *r.Intent
		if in.Raw == "" {
			in.Raw = text
		}
	} else {
		if s.extract == nil {
			return Outcome{}, ErrNoModel
		}
		var err error
		if in, err = s.extract.Extract(ctx, r.WorkspaceID, text, s.now()); err != nil {
			return Outcome{}, err
		}
		in.Raw = text
	}
	in.Actor, in.Workspace = requesterActor(r.Requester), r.WorkspaceID
	if in.Action == "" && !in.NeedsClarification {
		return Outcome{}, fmt.Errorf("%w: intent.action is empty; say what to do (search, answer, schedule, remind, ...)", ErrInvalid)
	}
	intent, _ := json.Marshal(in)
	reply, _ := json.Marshal(r.ReplyTo)
	if r.ReplyTo.Channel == "" {
		reply = nil
	}
	t, err := s.st.Tasks().Create(ctx, store.Task{WorkspaceID: r.WorkspaceID, Title: title(in), Detail: in.Raw, Intent: intent,
		Source: r.Source, SourceRef: r.SourceRef, CreatedBy: in.Actor, ReplyTo: reply})
	if errors.Is(err, store.ErrConflict) {
		return s.duplicate(ctx, t)
	}
	if err != nil {
		return Outcome{}, err
	}
	if s.audit != nil {
		details, _ := json.Marshal(map[string]any{"source": t.Source, "source_ref": t.SourceRef, "title": t.Title})
		s.audit(ctx, store.AuditEvent{WorkspaceID: t.WorkspaceID, Actor: in.Actor, Action: "task.create", Target: "task:" + t.ID, Details: details})
	}
	if in.NeedsClarification {
		return s.clarify(ctx, t, in.Question)
	}
	var (
		ag    Agent
		score float64
		plan  Plan
	)
	if r.Plan != nil {
		ag, score, plan = Agent{Name: r.Plan.Agent}, 1, *r.Plan
	} else {
		ag, score, err = s.route(ctx, r.WorkspaceID, r.Agent, in)
		if errors.Is(err, ErrUnknownAgent) {
			return s.fail(ctx, t, Outcome{}, err.Error())
		}
		if err != nil {
			return s.clarify(ctx, t, "I am not sure what to do with this. Could you say whether you want an answer, a search, a reminder or a calendar event?")
		}
		plan, err = ag.Plan(ctx, PlanRequest{WorkspaceID: r.WorkspaceID, TaskID: t.ID, Intent: in, Model: s.model, Now: s.now()})
	}
	var ce *ClarifyError
	if errors.As(err, &ce) {
		return s.clarify(ctx, t, ce.Question)
	}
	if err != nil {
		return s.fail(ctx, t, Outcome{Agent: ag.Name}, "plan: "+err.Error())
	}
	out := Outcome{Agent: ag.Name}
	// An external executor may bring tools of its own, declaring each
	// step's capability when it records it (RecordStep gates it then).
	if err := s.check(ctx, t, &plan, r.Executor != ""); err != nil {
		return s.fail(ctx, t, out, err.Error())
	}
	if r.Ceiling != "" {
		for i, st := range plan.Steps {
			if capRank(st.Capability) > capRank(r.Ceiling) {
				return s.fail(ctx, t, out, fmt.Sprintf("step %d (%s) needs capability %s, above the request's ceiling %s", i+1, st.Tool, st.Capability, r.Ceiling))
			}
		}
	}
	plan.Trusted = s.policy.of(ctx, t.WorkspaceID).Trusts(plan.Agent)
	def, vars, err := plan.Definition()
	if err != nil {
		return s.fail(ctx, t, out, err.Error())
	}
	payload, _ := json.Marshal(map[string]any{"agent": ag.Name, "score": score, "plan": plan})
	t, err = s.st.Tasks().Transition(ctx, t.WorkspaceID, t.ID, []store.TaskStatus{store.TaskOpen}, store.TaskRunning,
		store.TaskUpdate{Capability: store.Capability(plan.Capability()), Event: &store.TaskEvent{Type: store.TaskEventPlanned, Actor: "agent:" + ag.Name, Payload: payload}})
	if err != nil {
		return Outcome{}, err
	}
	var run store.Run
	if r.Executor != "" {
		// The engine leaves a run with an executor alone; the plan (the
		// definition it would have run, for the record) waits for a claim.
		work, _ := json.Marshal(map[string]any{"input": ExecutorInput{Intent: in, Plan: plan}})
		run, err = s.st.Runs().Create(ctx, store.Run{WorkspaceID: t.WorkspaceID, TaskID: t.ID, Executor: r.Executor, Definition: def, Input: work})
	} else {
		run, err = s.runs.Start(ctx, controlplane.StartRequest{WorkspaceID: t.WorkspaceID, Definition: def,
			Input: controlplane.RunInput{Input: in.Raw, Vars: vars}, TaskID: t.ID})
	}
	if err != nil {
		return s.fail(ctx, t, out, "start run: "+err.Error())
	}
	out.Task, out.RunID = t, run.ID
	return out, nil
}

var errNoRuns = errors.New("task: this service runs nothing (no run service); submit through the server")

// ErrUnknownAgent: the request names an agent the router does not know.
var ErrUnknownAgent = errors.New("task: unknown agent")

// route returns the named agent, or the router's pick.
func (s *Service) route(ctx context.Context, workspaceID, name string, in Intent) (Agent, float64, error) {
	if name == "" {
		return s.router.RouteJudged(ctx, workspaceID, in, s.judge)
	}
	for _, a := range s.router.Agents() {
		if a.Name == name {
			return a, 1, nil
		}
	}
	return Agent{}, 0, fmt.Errorf("%w %q", ErrUnknownAgent, name)
}

// check fills each step's capability from its tool, refusing a plan that
// names a tool the workspace lacks unless the executor brings its own
// (external).
func (s *Service) check(ctx context.Context, t store.Task, p *Plan, external bool) error {
	for i := range p.Steps {
		st := &p.Steps[i]
		tl, err := s.ledger.tool(ctx, t, st.Tool)
		if external && errors.Is(err, tool.ErrUnknownTool) {
			continue
		}
		if err != nil {
			return fmt.Errorf("plan step %d: %w", i+1, err)
		}
		st.Capability = string(storeCapability(tl.Capability()))
	}
	return nil
}

func (s *Service) duplicate(ctx context.Context, t store.Task) (Outcome, error) {
	out := Outcome{Task: t, Duplicate: true}
	if runs, err := s.st.Runs().List(ctx, t.WorkspaceID, store.RunFilter{TaskID: t.ID, Limit: 1}); err == nil && len(runs) > 0 {
		out.RunID = runs[0].ID
	}
	return out, nil
}

// NeedsClarification is the note of a task ended for want of an answer.
const NeedsClarification = "needs_clarification"

func (s *Service) clarify(ctx context.Context, t store.Task, question string) (Outcome, error) {
	payload, _ := json.Marshal(map[string]any{"reason": NeedsClarification, "question": question})
	t, err := s.st.Tasks().Transition(ctx, t.WorkspaceID, t.ID, liveStatuses, store.TaskCancelled,
		store.TaskUpdate{Event: &store.TaskEvent{Type: store.TaskEventNote, Actor: "system:task", Payload: payload}})
	if err != nil {
		return Outcome{}, err
	}
	return Outcome{Task: t, Question: question}, nil
}

func (s *Service) fail(ctx context.Context, t store.Task, out Outcome, msg string) (Outcome, error) {
	payload, _ := json.Marshal(map[string]any{"error": msg})
	t, err := s.st.Tasks().Transition(ctx, t.WorkspaceID, t.ID, liveStatuses, store.TaskFailed,
		store.TaskUpdate{Event: &store.TaskEvent{Type: store.TaskEventFailed, Actor: "system:task", Payload: payload},
			Notification: answer(s.log, t, KindError, Message{Text: "Sorry, I could not do that: " + msg})})
	if err != nil {
		return Outcome{}, err
	}
	out.Task = t
	return out, nil
}

// requesterActor names the requester so that one person is one actor on
// every channel: "user:<id>" when the account is known.
func requesterActor(r Requester) string {
	if r.UserID != "" {
		return identity.UserActorID(r.UserID)
	}
	if r.Actor != "" {
		return r.Actor
	}
	return "system:task"
}

func title(in Intent) string {
	t := firstNonEmpty(in.Target, in.Raw, in.Action+" "+in.Object, "(request)")
	if r := []rune(t); len(r) > 120 {
		t = string(r[:120]) + "…"
	}
	return t
}

// Decide applies a person's decision on an approval: the approver's role
// must allow the capability (approve_low, approve_medium, approve_high),
// and the requester of a high-capability task may not approve it unless
// the policy allows. Approving resumes the run parked on it (exactly
// once: the approval's decision and the run's resume are both
// idempotent, and the reconciler finishes a resume a crash interrupted);
// rejecting cancels the run and the task. Deciding again the same way
// returns the approval as it stands; the other way is store.ErrConflict.
func (s *Service) Decide(ctx context.Context, d Decision) (store.Approval, error) {
	a, err := s.st.Approvals().Get(ctx, d.WorkspaceID, d.ApprovalID)
	if err != nil {
		return store.Approval{}, err
	}
	if d.TaskID != "" && a.TaskID != d.TaskID {
		return store.Approval{}, fmt.Errorf("approval %s of task %s: %w", d.ApprovalID, d.TaskID, store.ErrNotFound)
	}
	if perm := ApprovePermission(a.Capability); !identity.Allows(d.Approver.Role, perm) {
		return a, fmt.Errorf("%w: a %s cannot approve a %s-capability action (needs %s)", ErrNotAllowed, roleName(d.Approver.Role), a.Capability, perm)
	}
	approver := requesterActor(d.Approver)
	if a.Capability == store.CapabilityHigh && !s.policy.of(ctx, d.WorkspaceID).AllowSelfApproval && approver == a.RequestedBy {
		return a, ErrSelfApproval
	}
	got, decided, err := s.st.Approvals().Decide(ctx, d.WorkspaceID, d.ApprovalID, d.Approve, approver, s.now())
	if errors.Is(err, store.ErrConflict) && got.Status == store.ApprovalExpired {
		s.expire(ctx, got)
		return got, ErrExpired
	}
	if err != nil {
		return got, err
	}
	if !decided {
		return got, nil
	}
	verb := "reject"
	if d.Approve {
		verb = "approve"
	}
	if s.audit != nil {
		details, _ := json.Marshal(map[string]any{"task_id": got.TaskID, "run_id": got.RunID, "capability": got.Capability,
			"summary": got.Summary, "comment": d.Comment})
		s.audit(ctx, store.AuditEvent{WorkspaceID: d.WorkspaceID, Actor: approver, Action: "approval." + verb,
			Target: "approval:" + got.ID, Details: details})
	}
	s.apply(ctx, got)
	return got, nil
}

// apply carries out a decided approval: the task moves on and the run
// resumes, or both end. It is idempotent, so the reconciler may repeat it.
//
// A service without runs (the CLI's) records the decision only; the
// reconciler of the server applies it within Options.Every.
func (s *Service) apply(ctx context.Context, a store.Approval) {
	ctx = context.WithoutCancel(ctx)
	if s.runs == nil {
		return
	}
	switch a.Status {
	case store.ApprovalApproved:
		if _, err := s.st.Tasks().Transition(ctx, a.WorkspaceID, a.TaskID, []store.TaskStatus{store.TaskAwaitingApproval}, store.TaskRunning, store.TaskUpdate{}); err != nil && !errors.Is(err, store.ErrConflict) {
			s.log.Warn("approved task not marked running", "task_id", a.TaskID, "err", err)
		}
		if a.RunID == "" {
			return
		}
		answer := map[string]any{"approval_id": a.ID, "approved": true, "approver": a.ApproverUserID}
		if _, err := s.runs.Resume(ctx, a.WorkspaceID, a.RunID, answer); err != nil && !errors.Is(err, controlplane.ErrNotWaiting) {
			s.log.Warn("approved run not resumed", "run_id", a.RunID, "err", err)
		}
	case store.ApprovalRejected:
		if a.RunID != "" {
			if _, err := s.runs.Cancel(ctx, a.WorkspaceID, a.RunID); err != nil {
				s.log.Warn("rejected run not canceled", "run_id", a.RunID, "err", err)
			}
		}
		s.settle(ctx, a.WorkspaceID, a.TaskID, store.TaskCancelled, "", nil)
	}
}

// ApprovePermission is the permission that approves (and undoes) an
// action of stored capability c; an unknown word asks for the owner's.
func ApprovePermission(c store.Capability) identity.Permission {
	var tc tool.Capability
	if err := tc.UnmarshalText([]byte(c)); err != nil {
		tc = tool.CapabilityHigh
	}
	return identity.ApprovePermission(tc)
}

func roleName(r identity.Role) string {
	if r == "" {
		return "caller without a role"
	}
	return string(r)
}
