package task

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/tool"
	"github.com/agentcraftlab/agentcraft/workflow"
)

// Tools finds a workspace's tool by name, as an agent of the workspace
// would be given it; the composition root implements it over package
// catalog. An unknown name is an error wrapping tool.ErrUnknownTool.
type Tools interface {
	Tool(ctx context.Context, workspaceID, name string) (tool.Tool, error)
}

// Policy is how the task service treats capabilities.
type Policy struct {
	// ApprovalTTL is how long an approval may be decided before it
	// expires and its task with it. Default 24 h.
	ApprovalTTL time.Duration
	// AllowSelfApproval lets the requester of a high-capability task
	// approve it. Default false: somebody else must.
	AllowSelfApproval bool
	// CompensateOnFailure undoes a failed task's recorded side effects
	// (in reverse order) as soon as its run fails. Default false: a
	// person asks for it (POST /api/tasks/{id}/compensate).
	CompensateOnFailure bool
	// TrustedExecutors are the agents (a task's planning agent, or an
	// external executor of the worker API) whose medium steps run
	// without an approval. High steps always wait for a person.
	TrustedExecutors []string
}

// Trusts reports whether executor's medium steps skip approval.
func (p Policy) Trusts(executor string) bool {
	return executor != "" && slices.Contains(p.TrustedExecutors, executor)
}

// policies is the policy of each workspace: the default, or the one its
// name is given (Options.WorkspacePolicies).
type policies struct {
	def    Policy
	byName map[string]Policy
	st     store.Store
}

func newPolicies(st store.Store, def Policy, byName map[string]Policy) policies {
	p := policies{def: def.withDefaults(), byName: map[string]Policy{}, st: st}
	for k, v := range byName {
		p.byName[k] = v.withDefaults()
	}
	return p
}

// of returns the workspace's policy.
func (p policies) of(ctx context.Context, workspaceID string) Policy {
	if len(p.byName) == 0 {
		return p.def
	}
	if w, err := p.st.Workspaces().Get(ctx, workspaceID); err == nil {
		if pol, ok := p.byName[w.Name]; ok {
			return pol
		}
	}
	return p.def
}

func (p Policy) withDefaults() Policy {
	if p.ApprovalTTL <= 0 {
		p.ApprovalTTL = 24 * time.Hour
	}
	return p
}

// LedgerOptions configure a Ledger.
type LedgerOptions struct {
	Policy Policy
	// WorkspacePolicies, by workspace name, replace Policy for those
	// workspaces.
	WorkspacePolicies map[string]Policy
	Logger            *slog.Logger
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Ledger performs the side effects of workflow runs for their tasks: it
// is the workflow.Actions of the engine, so every tool and approval node
// of every run — a task's plan or a workflow a person wrote — goes
// through it. A step is recorded in the task's evidence ledger before
// the tool is called, under the idempotency key "<run>/<execution key>",
// so a run resumed after a crash gets the recorded output back instead
// of a second effect; a tool of medium or high capability is called only
// once an approval of that very step was granted. A run that executes no
// task's plan (a workflow started through the API) gets a task of its own
// (source "workflow", source ref the run id) the first time it acts, so
// its steps and approvals are listed and decided like any other.
type Ledger struct {
	st     store.Store
	tools  Tools
	policy policies
	log    *slog.Logger
	now    func() time.Time
}

// NewLedger returns the ledger of st calling tools.
func NewLedger(st store.Store, tools Tools, opts *LedgerOptions) *Ledger {
	var o LedgerOptions
	if opts != nil {
		o = *opts
	}
	l := &Ledger{st: st, tools: tools, policy: newPolicies(st, o.Policy, o.WorkspacePolicies), log: o.Logger, now: o.Now}
	if l.log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	if l.now == nil {
		l.now = time.Now
	}
	return l
}

var _ workflow.Actions = (*Ledger)(nil)

// SourceWorkflow is the source of the tasks the ledger makes for runs
// started without one.
const SourceWorkflow = "workflow"

// StepKey is the idempotency key of a run's node execution: the key its
// step is recorded under and its approval asked for.
func StepKey(runID, execKey string) string { return runID + "/" + execKey }

// taskOf returns the task the run acts for, making one for a run that
// has none, and the run.
func (l *Ledger) taskOf(ctx context.Context, workspaceID, runID string) (store.Task, store.Run, error) {
	run, err := l.st.Runs().Get(ctx, workspaceID, runID)
	if err != nil {
		return store.Task{}, store.Run{}, err
	}
	t, err := l.runTask(ctx, run)
	return t, run, err
}

func (l *Ledger) runTask(ctx context.Context, run store.Run) (store.Task, error) {
	workspaceID, runID := run.WorkspaceID, run.ID
	if run.TaskID != "" {
		return l.st.Tasks().Get(ctx, workspaceID, run.TaskID)
	}
	t, err := l.st.Tasks().Create(ctx, store.Task{WorkspaceID: workspaceID, Title: "Workflow run " + runID,
		Status: store.TaskRunning, Source: SourceWorkflow, SourceRef: runID, CreatedBy: "system:workflow"})
	if errors.Is(err, store.ErrConflict) {
		return l.st.Tasks().GetBySource(ctx, workspaceID, SourceWorkflow, runID)
	}
	return t, err
}

// Act calls the tool once for the step; see Ledger.
func (l *Ledger) Act(ctx context.Context, c workflow.ToolCall) (any, error) {
	tk, run, err := l.taskOf(ctx, c.WorkspaceID, c.RunID)
	if err != nil {
		return nil, fmt.Errorf("task of run %s: %w", c.RunID, err)
	}
	t, err := l.tool(ctx, tk, c.Tool)
	if err != nil {
		return nil, err
	}
	key := StepKey(c.RunID, c.Key)
	capability := storeCapability(t.Capability())
	if capability != store.CapabilityLow && !(capability == store.CapabilityMedium && l.trustedRun(ctx, run)) {
		if err := l.granted(ctx, tk, key, capability); err != nil {
			return nil, err
		}
	}
	args, err := json.Marshal(c.Input)
	if err != nil {
		return nil, fmt.Errorf("encode input: %w", err)
	}
	keyed, isKeyed := t.(tool.KeyedArgs)
	if isKeyed {
		if args, err = keyed.WithIdempotencyKey(args, key); err != nil {
			return nil, fmt.Errorf("idempotency key: %w", err)
		}
	}
	step, err := l.st.Steps().Record(ctx, store.TaskStep{WorkspaceID: c.WorkspaceID, TaskID: tk.ID, RunID: c.RunID,
		IdempotencyKey: key, Tool: t.Name(), Capability: capability, Input: args})
	if errors.Is(err, store.ErrConflict) {
		// The step was recorded by an earlier execution of this node.
		switch step.Status {
		case store.StepOK, store.StepCompensated:
			return decodeOutput(step.Output), nil
		case store.StepError, store.StepSkipped:
			return nil, fmt.Errorf("step %d failed before: %s", step.Seq, step.Error)
		}
		// Pending: the process died between recording and finishing.
		// A read, or a tool the target dedupes by our key, may run again;
		// anything else may have happened already and must not repeat.
		if capability != store.CapabilityLow && !isKeyed {
			msg := "interrupted after the call began; it may or may not have taken effect, and " + t.Name() +
				" cannot be retried safely: check the target, then run the task again"
			l.finish(ctx, tk, step, store.StepResult{Status: store.StepError, Error: msg})
			return nil, errors.New(msg)
		}
	} else if err != nil {
		return nil, fmt.Errorf("record step: %w", err)
	}
	res, callErr := t.Call(ctx, args)
	if callErr != nil && ctx.Err() != nil {
		// Stopping (shutdown or cancel): the step stays pending, and a
		// resumed run decides as above.
		return nil, callErr
	}
	if callErr != nil || res.IsError {
		msg := res.Content
		if callErr != nil {
			msg = callErr.Error()
		}
		l.finish(ctx, tk, step, store.StepResult{Status: store.StepError, Error: msg})
		return nil, errors.New(msg)
	}
	var undo json.RawMessage
	if u, ok := t.(tool.Undoable); ok {
		if undo, err = u.UndoOf(args, res); err != nil {
			l.log.Warn("task step has no undo", "task_id", tk.ID, "tool", t.Name(), "err", err)
			undo = nil
		}
	}
	out := encodeOutput(res.Content)
	l.finish(ctx, tk, step, store.StepResult{Status: store.StepOK, Output: out, Undo: undo})
	return decodeOutput(out), nil
}

// trustedRun reports whether the run executes the plan of a trusted
// executor. Only a task's run counts: a workflow started through the API
// names its own vars, so its _agent proves nothing.
func (l *Ledger) trustedRun(ctx context.Context, run store.Run) bool {
	pol := l.policy.of(ctx, run.WorkspaceID)
	if len(pol.TrustedExecutors) == 0 || run.TaskID == "" {
		return false
	}
	var in struct {
		Vars map[string]any `json:"vars"`
	}
	_ = json.Unmarshal(run.Input, &in)
	agent, _ := in.Vars[varAgent].(string)
	return pol.Trusts(agent)
}

// tool finds the named tool for the task: the ledger's own task_remind,
// or the workspace's.
func (l *Ledger) tool(ctx context.Context, tk store.Task, name string) (tool.Tool, error) {
	if name == ToolRemind {
		return remindTool{st: l.st, task: tk, now: l.now}, nil
	}
	t, err := l.tools.Tool(ctx, tk.WorkspaceID, name)
	if err != nil {
		return nil, err
	}
	if name == ToolKBSearch {
		// kb_search is medium for a chat agent, whose client sees what
		// it reads; a task's search reads the workspace's own knowledge
		// for one of its members, and its answer goes only to the chat
		// that asked: a read, low (the design's Research and Admin).
		return workspaceRead{t}, nil
	}
	return t, nil
}

// workspaceRead is a tool that only reads the task's workspace.
type workspaceRead struct{ tool.Tool }

func (workspaceRead) Capability() tool.Capability { return tool.CapabilityLow }

// finish writes the step's result and the task's step event; the writes
// survive the run's cancellation.
func (l *Ledger) finish(ctx context.Context, tk store.Task, step store.TaskStep, r store.StepResult) {
	ctx = context.WithoutCancel(ctx)
	done, err := l.st.Steps().Finish(ctx, tk.WorkspaceID, step.ID, r)
	if err != nil {
		l.log.Error("task step result not saved", "task_id", tk.ID, "step_id", step.ID, "err", err)
		return
	}
	payload, _ := json.Marshal(map[string]any{"step_id": done.ID, "seq": done.Seq, "tool": done.Tool, "status": done.Status, "error": done.Error})
	if _, err := l.st.Tasks().AppendEvent(ctx, tk.WorkspaceID, tk.ID, store.TaskEvent{Type: store.TaskEventStep,
		Actor: "system:task", Payload: payload}); err != nil {
		l.log.Error("task step event not saved", "task_id", tk.ID, "err", err)
	}
}

// granted reports nil when the step's approval was granted.
func (l *Ledger) granted(ctx context.Context, tk store.Task, key string, c store.Capability) error {
	as, err := l.st.Approvals().List(ctx, tk.WorkspaceID, store.ApprovalFilter{TaskID: tk.ID, Limit: 1000})
	if err != nil {
		return fmt.Errorf("approvals: %w", err)
	}
	for _, a := range as {
		if a.StepKey != key {
			continue
		}
		if a.Status == store.ApprovalApproved && rank(a.Capability) >= rank(c) {
			return nil
		}
		return fmt.Errorf("%w: the approval of this step is %s", ErrNeedsApproval, a.Status)
	}
	return fmt.Errorf("%w: the tool's capability is %s; put an approval node (step: this node) before it", ErrNeedsApproval, c)
}

// ErrNeedsApproval refuses a medium or high tool call no approval let
// through.
var ErrNeedsApproval = errors.New("needs an approved approval")

// Approval asks for the step's approval once; see Ledger.
func (l *Ledger) Approval(ctx context.Context, req workflow.ApprovalRequest) (workflow.ApprovalState, error) {
	c := store.Capability(req.Capability)
	if !c.Valid() {
		return workflow.ApprovalState{}, fmt.Errorf("capability %q is not low, medium or high", req.Capability)
	}
	tk, _, err := l.taskOf(ctx, req.WorkspaceID, req.RunID)
	if err != nil {
		return workflow.ApprovalState{}, fmt.Errorf("task of run %s: %w", req.RunID, err)
	}
	ttl := req.TTL
	if ttl <= 0 {
		ttl = l.policy.of(ctx, req.WorkspaceID).ApprovalTTL
	}
	expires := l.now().Add(ttl).UTC()
	a, err := l.st.Approvals().Create(ctx, store.Approval{WorkspaceID: req.WorkspaceID, TaskID: tk.ID, RunID: req.RunID,
		StepKey: StepKey(req.RunID, req.StepKey), Capability: c, Summary: req.Summary, RequestedBy: tk.CreatedBy, ExpiresAt: &expires})
	switch {
	case errors.Is(err, store.ErrConflict):
		// Asked before this execution: the decision, if any, stands. A
		// crash may have come between asking and telling: finish that.
		if a.Status == store.ApprovalPending {
			l.asked(ctx, tk, a)
		}
	case err != nil:
		return workflow.ApprovalState{}, fmt.Errorf("create approval: %w", err)
	default:
		l.asked(ctx, tk, a)
	}
	st := workflow.ApprovalState{ID: a.ID, Status: string(a.Status), Approver: a.ApproverUserID, ExpiresAt: a.ExpiresAt}
	if a.Status == store.ApprovalPending && a.ExpiresAt != nil && !l.now().Before(*a.ExpiresAt) {
		st.Status = workflow.ApprovalExpired
	}
	return st, nil
}

// asked sends the approval card to where the task answers and moves the
// task to awaiting_approval. It may be repeated (a run resumed after a
// crash between asking and telling): the card is queued once per
// approval, the transition and its event happen once.
func (l *Ledger) asked(ctx context.Context, tk store.Task, a store.Approval) {
	ctx = context.WithoutCancel(ctx)
	if !l.carded(ctx, tk, a.ID) {
		card := &ApprovalCard{ID: a.ID, TaskID: tk.ID, TaskTitle: tk.Title, Summary: a.Summary, Capability: string(a.Capability), ExpiresAt: a.ExpiresAt}
		notify(ctx, l.st, l.log, tk, KindApproval, Message{Text: "Approval needed (" + string(a.Capability) + "): " + a.Summary, Approval: card}, nil)
	}
	cur, err := l.st.Tasks().Get(ctx, tk.WorkspaceID, tk.ID)
	if err != nil || cur.Status == store.TaskAwaitingApproval || cur.Status.Final() {
		return
	}
	payload, _ := json.Marshal(map[string]any{"approval_id": a.ID, "summary": a.Summary, "capability": a.Capability})
	ev := &store.TaskEvent{Type: EventApprovalRequested, Actor: "system:task", Payload: payload}
	if _, err := l.st.Tasks().Transition(ctx, tk.WorkspaceID, tk.ID, liveStatuses, store.TaskAwaitingApproval, store.TaskUpdate{Event: ev}); err != nil && !errors.Is(err, store.ErrConflict) {
		l.log.Warn("task not marked awaiting approval", "task_id", tk.ID, "err", err)
	}
}

// carded reports whether the approval's card is in the task's outbox.
func (l *Ledger) carded(ctx context.Context, tk store.Task, approvalID string) bool {
	ns, err := l.st.Notifications().List(ctx, tk.WorkspaceID, store.NotificationFilter{TaskID: tk.ID, Limit: 1000})
	if err != nil {
		return false
	}
	for _, n := range ns {
		var m Message
		if n.Kind == KindApproval && json.Unmarshal(n.Payload, &m) == nil && m.Approval != nil && m.Approval.ID == approvalID {
			return true
		}
	}
	return false
}

// EventApprovalRequested is the task event of an approval being asked.
const EventApprovalRequested = "approval_requested"

// liveStatuses are the task statuses a run may move on from.
var liveStatuses = []store.TaskStatus{store.TaskOpen, store.TaskPlanning, store.TaskAwaitingApproval, store.TaskRunning}

func storeCapability(c tool.Capability) store.Capability {
	switch c {
	case tool.CapabilityMedium:
		return store.CapabilityMedium
	case tool.CapabilityHigh:
		return store.CapabilityHigh
	}
	return store.CapabilityLow
}

func rank(c store.Capability) int {
	switch c {
	case store.CapabilityMedium:
		return 1
	case store.CapabilityHigh:
		return 2
	}
	return 0
}

// encodeOutput keeps a tool's JSON result as JSON and wraps text as a
// JSON string.
func encodeOutput(content string) json.RawMessage {
	if json.Valid([]byte(content)) {
		return json.RawMessage(content)
	}
	b, _ := json.Marshal(content)
	return b
}

func decodeOutput(m json.RawMessage) any {
	if len(m) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(m, &v); err != nil {
		return string(m)
	}
	return v
}
