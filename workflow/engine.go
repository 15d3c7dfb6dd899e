package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/expr-lang/expr/vm"

	"github.com/agentcraftlab/agentcraft/agent"
	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/workflow/transform"
)

// Run statuses an [Outcome] reports; they are the store's run statuses.
const (
	StatusSucceeded      = "succeeded"
	StatusFailed         = "failed"
	StatusFailedContract = "failed_contract"
	StatusWaiting        = "waiting"
	StatusBlocked        = "blocked"
	StatusCanceled       = "canceled"
)

// EngineDefaults bound runs whose settings leave a value at zero.
type EngineDefaults struct {
	// MaxSteps bounds node executions per run; default 1000.
	MaxSteps int
	// Timeout bounds a run's wall time; default 30 minutes.
	Timeout time.Duration
}

// AgentResolver turns an agent node's config into a runnable agent. The
// server implements it on top of the platform's agents and providers.
type AgentResolver interface {
	// Named returns the workspace's agent called name.
	Named(ctx context.Context, at AgentCall, name string) (*agent.Agent, error)
	// Inline builds an agent from a model reference ("provider/model"; a
	// bare model naming no provider is refused), instructions and
	// tool names.
	Inline(ctx context.Context, at AgentCall, spec InlineAgent) (*agent.Agent, error)
}

// AgentCall says where in a run an agent is wanted: the resolver accounts
// the agent's usage to that workspace and run.
type AgentCall struct {
	WorkspaceID string
	RunID       string
	NodeID      string
	// Workflow is the name of the run's workflow, for grouping usage.
	Workflow string
	// Actor is whom the run acts for (Request.Actor); "" leaves it to the
	// resolver (the executing process).
	Actor string
}

// InlineAgent is an agent configured inside a workflow node.
type InlineAgent struct {
	Provider     string
	Model        string
	Instructions string
	Tools        []string
	Temperature  *float64
	MaxTurns     int
}

// Services are what node executors may use. Nil fields make the kinds that
// need them fail with a message saying what is missing.
type Services struct {
	Agents AgentResolver
	// HTTP makes http-request nodes' and webhook hooks' requests; it must
	// enforce the server's egress policy (package internal/egress).
	HTTP *http.Client
	// Transform runs code nodes and code hooks.
	Transform *transform.Runner
	// Knowledge searches knowledge bases for rag nodes.
	Knowledge KnowledgeSearcher
	// Actions performs tool nodes' calls and approval nodes' questions
	// for the run's task (package task).
	Actions Actions
	// Plans keeps the plans autonomous nodes' runs reached their goal
	// with (package autonomous's Memory); nil: they are not kept.
	Plans PlanKeeper
	// Images draws image nodes' pictures and stores them as uploads of
	// the run's workspace (tool/imagegen).
	Images ImageGenerator
	Logger *slog.Logger
}

// PlanKeeper keeps a plan that reached its goal, for the planning of
// similar goals: plan is the JSON of an autonomous.FlowPlan (package
// workflow cannot name the type: autonomous builds on it).
type PlanKeeper interface {
	KeepPlan(ctx context.Context, workspaceID string, plan json.RawMessage) error
}

// KnowledgeSearcher searches a workspace's knowledge bases, named by name or
// id, for rag nodes; package kb implements it (as rag.Searcher).
type KnowledgeSearcher interface {
	Search(ctx context.Context, workspaceID string, kbs []string, q search.Query) (search.Result, error)
}

// Engine runs workflow plans. It is safe for concurrent use.
type Engine struct {
	reg      *Registry
	svc      Services
	defaults EngineDefaults
}

// NewEngine returns an engine for the kinds in reg.
func NewEngine(reg *Registry, svc Services, d *EngineDefaults) *Engine {
	e := &Engine{reg: reg, svc: svc}
	if d != nil {
		e.defaults = *d
	}
	if e.defaults.MaxSteps <= 0 {
		e.defaults.MaxSteps = 1000
	}
	if e.defaults.Timeout <= 0 {
		e.defaults.Timeout = 30 * time.Minute
	}
	if e.svc.Transform == nil {
		e.svc.Transform = transform.New(nil)
	}
	if e.svc.Logger == nil {
		e.svc.Logger = slog.New(slog.DiscardHandler)
	}
	return e
}

// Registry returns the engine's node kinds.
func (e *Engine) Registry() *Registry { return e.reg }

// Prepare validates def and prepares it to run. A definition that does not
// validate gives an *InvalidError with every problem.
func (e *Engine) Prepare(def *Definition) (*Plan, error) {
	return prepare(def, e.reg, e.defaults)
}

// Saved is a checkpointed node execution.
type Saved struct {
	Output any
	Handle string
}

// Checkpointer saves node executions so that a resumed run skips them.
type Checkpointer interface {
	// Load returns the run's saved executions by key.
	Load(ctx context.Context) (map[string]Saved, error)
	// Save records one execution. It fails when the key is already saved
	// (another executor ran it: the run must stop) or the write fails.
	Save(ctx context.Context, key, nodeID string, s Saved) error
}

// Request is one run of a plan.
type Request struct {
	RunID       string
	WorkspaceID string
	// Actor names whom the run acts for, such as "trigger:<id>" for a run a
	// trigger started; its agent nodes are accounted to it. "" is the
	// executing process.
	Actor string
	// Input is the run's input: {{input}} of the nodes after start.
	Input any
	// Vars are {{vars.<name>}}.
	Vars map[string]any
	// Checkpoints, when set, replays saved executions and saves new ones.
	Checkpoints Checkpointer
	// Emit receives the run's events in order per node; it must be fast
	// and safe for concurrent use. Nil discards them.
	Emit func(Event)
}

// Outcome is how a run ended.
type Outcome struct {
	// Status is one of the Status constants.
	Status string
	Output any
	Error  string
	// WaitingNode and WaitingKey name the human node execution a waiting
	// run is parked on; Wait is what it asks.
	WaitingNode string
	WaitingKey  string
	Wait        *Wait
	// Contract is the failing contract node's report (failed_contract).
	Contract any
	// Steps counts node executions, replayed ones included.
	Steps int
}

// Exec is what an executor sees of one node execution.
type Exec struct {
	RunID       string
	WorkspaceID string
	// Actor is Request.Actor.
	Actor string
	Node  *Node
	// Key identifies this execution within the run.
	Key string
	// Input is the node's input: the output of the node before it, or the
	// merged outputs of several.
	Input any
	// Data resolves templates: {{input}}, {{vars.x}}, {{nodes.<id>.output}}.
	Data transform.Data
	// Handoffs, for an agent with several outgoing edges, are the node
	// ids it may hand control to.
	Handoffs []string
	Services *Services
	// Hooks run PreAgent and PostAgent hooks; agent executors call them.
	Hooks    HookRunner
	emit     func(Event)
	programs map[string]*vm.Program
	run      *run
}

// JournalSep joins a node execution's key and the name of one of its
// journal entries ("auto!step-3"); a checkpoint key holding it is a
// journal entry, not a node execution.
const JournalSep = "!"

// Recall returns the journal entry sub of this execution, recorded by an
// earlier attempt of it (before a crash or a park) or by the answer a
// resumed wait received: an executor that takes several costly steps (an
// autonomous agent's model calls) replays them from here instead of
// repeating them. A value read back from the store is decoded JSON.
func (x *Exec) Recall(sub string) (any, bool) {
	if x.run == nil {
		return nil, false
	}
	key := x.Key + JournalSep + sub
	if s, ok := x.run.saved[key]; ok {
		return s.Output, true
	}
	x.run.jmu.Lock()
	defer x.run.jmu.Unlock()
	v, ok := x.run.journal[key]
	return v, ok
}

// Record saves v as the journal entry sub of this execution: durably, in
// the same store as checkpoints, when the run has one. It fails when the
// entry exists already (another executor recorded it: the run must stop).
func (x *Exec) Record(ctx context.Context, sub string, v any) error {
	if x.run == nil {
		return errors.New("workflow: journal: execution has no run")
	}
	key := x.Key + JournalSep + sub
	if cp := x.run.req.Checkpoints; cp != nil {
		if err := cp.Save(ctx, key, x.Node.ID, Saved{Output: v}); err != nil {
			return fmt.Errorf("workflow: journal %s: %w", key, err)
		}
	}
	x.run.jmu.Lock()
	defer x.run.jmu.Unlock()
	if x.run.journal == nil {
		x.run.journal = make(map[string]any)
	}
	x.run.journal[key] = v
	return nil
}

// AgentCall is where this execution asks for an agent.
func (x *Exec) AgentCall() AgentCall {
	call := AgentCall{WorkspaceID: x.WorkspaceID, RunID: x.RunID, NodeID: x.Node.ID, Actor: x.Actor}
	if x.run != nil && x.run.p != nil && x.run.p.Def != nil {
		call.Workflow = x.run.p.Def.Name
	}
	return call
}

// Eval evaluates the node's compiled boolean expression called name (""
// for a condition's; a route's name for a router's) over input, vars and
// nodes.<id>.output.
func (x *Exec) Eval(name string) (bool, error) {
	prog := x.programs[name]
	if prog == nil {
		return false, fmt.Errorf("no expression %q", name)
	}
	return evalBool(prog, x.Input, x.Data.Vars, x.Data.Nodes, nil)
}

// Emit sends an event of this node execution.
func (x *Exec) Emit(ev Event) {
	if x.emit == nil {
		return
	}
	ev.NodeID, ev.Key, ev.NodeType = x.Node.ID, x.Key, x.Node.Type
	x.emit(ev)
}

// Emitting reports whether events are wanted; executors skip building
// fine-grained events when not.
func (x *Exec) Emitting() bool { return x.emit != nil }

// Render renders a template against the execution's data.
func (x *Exec) Render(tmpl string) (string, error) { return transform.Render(tmpl, x.Data) }

// ConfigTemplate resolves the template config key (def when absent) to a
// value: a template that is exactly one reference keeps its type.
func (x *Exec) ConfigTemplate(key, def string) (any, error) {
	tmpl := def
	if v, ok := x.Node.Config[key]; ok {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("config.%s: want a string template, got %T", key, v)
		}
		tmpl = s
	}
	v, err := transform.Resolve(tmpl, x.Data)
	if err != nil {
		return nil, fmt.Errorf("config.%s: %w", key, err)
	}
	return v, nil
}

// HookRunner runs the definition's agent hooks for an executor.
type HookRunner interface {
	PreAgent(ctx context.Context, x *Exec, prompt string) (string, error)
	PostAgent(ctx context.Context, x *Exec, output string) (string, error)
}

// Result is what an executor returns.
type Result struct {
	Output any
	// Handle is the sourceHandle a branching node chose.
	Handle string
	// HandoffTo is the node an agent handed control to ("" for none).
	HandoffTo string
	// Wait parks the run (human nodes); Output is ignored.
	Wait *Wait
}

// ContractError is returned by contract and output_check executors when
// the data breaks the contract; the run ends failed_contract.
type ContractError struct {
	Message string
	Report  any
}

func (e *ContractError) Error() string { return "contract failed: " + e.Message }

// errHalt stops a scope because the run is parked or already failed.
var errHalt = errors.New("workflow: run halted")

// run is the state of one execution of a plan.
type run struct {
	e     *Engine
	p     *Plan
	req   *Request
	saved map[string]Saved

	jmu     sync.Mutex     // guards journal
	journal map[string]any // entries recorded during this execution

	steps  atomic.Int64
	cancel context.CancelFunc

	mu       sync.Mutex // guards the fields below
	outcome  *Outcome   // first terminal outcome (failure, wait)
	final    any        // output of the end node
	finalSet bool
	last     any // output of the last finished node of the top scope
}

// Run executes the plan. It returns when the run ends, fails, is parked on
// a human node, or ctx ends (canceled).
func (e *Engine) Run(ctx context.Context, p *Plan, req Request) Outcome {
	r := &run{e: e, p: p, req: &req}
	start := time.Now()
	if req.Checkpoints != nil {
		saved, err := req.Checkpoints.Load(ctx)
		if err != nil {
			return r.finish(start, Outcome{Status: StatusFailed, Error: "load checkpoints: " + err.Error()})
		}
		r.saved = saved
	}
	r.emit(Event{Type: EventRunStarted, Data: map[string]any{"strategy": string(p.Strategy)}})
	input, blocked, err := r.onInput(ctx, req.Input)
	if err != nil {
		return r.finish(start, Outcome{Status: StatusFailed, Error: err.Error()})
	}
	if blocked != "" {
		r.emit(Event{Type: EventRunBlocked, Error: blocked})
		return r.finish(start, Outcome{Status: StatusBlocked, Error: blocked})
	}
	req.Input = input
	if err := r.hook(ctx, hookPreExecute, nil, input); err != nil {
		return r.finish(start, Outcome{Status: StatusFailed, Error: err.Error()})
	}
	runCtx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	r.cancel = cancel
	res := r.runScope(runCtx, p.top, "", input, req.Vars, nil)
	r.mu.Lock()
	out := r.outcome
	final, finalSet, last := r.final, r.finalSet, r.last
	r.mu.Unlock()
	switch {
	case out != nil:
	case res.err != nil && ctx.Err() != nil:
		out = &Outcome{Status: StatusCanceled, Error: "canceled: " + context.Cause(ctx).Error()}
	case res.err != nil && runCtx.Err() != nil:
		out = &Outcome{Status: StatusFailed, Error: fmt.Sprintf("run timed out after %s", p.timeout)}
	case res.err != nil:
		out = &Outcome{Status: StatusFailed, Error: res.err.Error()}
	default:
		if !finalSet {
			final = last
		}
		out = &Outcome{Status: StatusSucceeded, Output: final}
	}
	if out.Status == StatusSucceeded {
		// Code hooks at on_complete replace the run's output (docs/workflow.md);
		// out may be r.outcome, so the replaced outcome is a copy.
		v, err := r.runHooks(ctx, hookOnComplete, nil, out.Output)
		if err != nil {
			out = &Outcome{Status: StatusFailed, Error: err.Error()}
		} else {
			done := *out
			done.Output = v
			out = &done
		}
	}
	if out.Status == StatusFailed || out.Status == StatusFailedContract {
		// OnError hooks report; their own failure does not change the outcome.
		_ = r.hook(ctx, hookOnError, nil, map[string]any{"status": out.Status, "error": out.Error})
	}
	return r.finish(start, *out)
}

func (r *run) finish(start time.Time, out Outcome) Outcome {
	out.Steps = int(r.steps.Load())
	ev := Event{Type: EventRunFinished, Status: out.Status, Error: out.Error, DurationMS: ms(time.Since(start))}
	if out.Status == StatusSucceeded {
		ev.Output = out.Output
	}
	if out.Status == StatusWaiting {
		ev.NodeID, ev.Key = out.WaitingNode, out.WaitingKey
	}
	r.emit(ev)
	return out
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func (r *run) emit(ev Event) {
	if r.req.Emit == nil {
		return
	}
	ev.RunID = r.req.RunID
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	r.req.Emit(ev)
}

// halt records the first terminal outcome and stops the run: a failure
// cancels what is in flight; a wait lets it finish but starts nothing new.
func (r *run) halt(o Outcome, cancelRun bool) {
	r.mu.Lock()
	first := r.outcome == nil
	if first {
		r.outcome = &o
	}
	r.mu.Unlock()
	if first && cancelRun && r.cancel != nil {
		r.cancel()
	}
}

func (r *run) halted() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.outcome != nil
}

// scopeRun is one execution of a scope.
type scopeRun struct {
	sc     *scope
	prefix string
	vars   map[string]any
	parent *scopeRun

	mu      sync.Mutex     // guards outputs
	outputs map[string]any // member node id → output, for templates
}

// lookupAll flattens the outputs visible from s (own scope first).
func (s *scopeRun) snapshot() map[string]any {
	out := map[string]any{}
	var chain []*scopeRun
	for c := s; c != nil; c = c.parent {
		chain = append(chain, c)
	}
	for i := len(chain) - 1; i >= 0; i-- {
		c := chain[i]
		c.mu.Lock()
		for k, v := range c.outputs {
			out[k] = v
		}
		c.mu.Unlock()
	}
	return out
}

func (s *scopeRun) set(id string, v any) {
	s.mu.Lock()
	s.outputs[id] = v
	s.mu.Unlock()
}

// scopeResult is how a scope execution ended.
type scopeResult struct {
	err error
	// output is the body's output: its active sinks' (or, for a loop
	// body, the sources of the active edges back to the loop).
	output any
	// exits are the edges leaving the scope that became active.
	exits map[int]bool
}

// nodeState is a member's progress within one scope execution.
type nodeState struct {
	pending int // incoming edges not yet resolved
	active  int // incoming edges resolved active
	entry   bool
	done    bool
	ran     bool // executed (or replayed), not skipped
	output  any
	handle  string
	handoff string
	exits   map[int]bool // a compound's active exit edges
}

type finished struct {
	m   int
	res Result
	ex  map[int]bool
	err error
}

// runScope runs the members of sc from its entry (the start node for the
// top scope) until every member is done or skipped.
func (r *run) runScope(ctx context.Context, sc *scope, prefix string, entryInput any, vars map[string]any, parent *scopeRun) scopeResult {
	sr := &scopeRun{sc: sc, prefix: prefix, vars: vars, parent: parent, outputs: make(map[string]any, len(sc.nodes))}
	st := make(map[int]*nodeState, len(sc.nodes))
	for _, m := range sc.nodes {
		st[m] = &nodeState{pending: len(sc.in[m])}
	}
	var ready []int
	if sc.owner < 0 {
		st[r.p.start].entry = true
		st[r.p.start].active++
		st[r.p.start].pending = 0
		ready = append(ready, r.p.start)
	} else {
		for _, ei := range sc.entry {
			t := r.p.etgt[ei]
			if s := st[t]; s != nil && !s.entry {
				s.entry = true
				s.active++
				if s.pending == 0 {
					ready = append(ready, t)
				}
			}
		}
	}
	sequential := r.p.Strategy == StrategySequential || r.p.Strategy == StrategySingle
	results := make(chan finished, len(sc.nodes))
	inFlight := 0
	var firstErr error
	exits := map[int]bool{}

	// resolve marks m's outgoing edges inside the scope active or dead
	// and queues the targets that became ready; dead targets cascade.
	var resolve func(m int, executed bool)
	resolve = func(m int, executed bool) {
		s := st[m]
		for _, ei := range r.p.nodes[m].outs {
			e := &r.p.edges[ei]
			t := r.p.etgt[ei]
			ts := st[t]
			if ts == nil {
				continue
			}
			if executed && r.edgeActive(m, ei, s) {
				ts.active++
			}
			ts.pending--
			if ts.pending == 0 {
				if ts.active > 0 {
					ready = append(ready, t)
				} else {
					ts.done = true
					r.emit(Event{Type: EventNodeSkipped, NodeID: e.Target, Key: prefix + e.Target, NodeType: r.p.nodes[t].node.Type})
					resolve(t, false)
				}
			}
		}
		if executed && sc.owner >= 0 {
			for _, ei := range sc.exits {
				if r.p.edges[ei].Source == r.p.nodes[m].node.ID && r.edgeActive(m, ei, s) {
					exits[ei] = true
				}
			}
		}
	}

	complete := func(f finished) {
		s := st[f.m]
		s.done = true
		if f.err != nil {
			if firstErr == nil {
				firstErr = f.err
			}
			return
		}
		s.ran = true
		s.output, s.handle, s.handoff, s.exits = f.res.Output, f.res.Handle, f.res.HandoffTo, f.ex
		sr.set(r.p.nodes[f.m].node.ID, f.res.Output)
		resolve(f.m, true)
	}

	for {
		for len(ready) > 0 && firstErr == nil && !r.halted() {
			m := ready[0]
			ready = ready[1:]
			in := r.inputOf(sc, st, m, entryInput)
			if sequential || (inFlight == 0 && len(ready) == 0) {
				res, ex, err := r.execNode(ctx, sr, m, in)
				complete(finished{m, res, ex, err})
				continue
			}
			inFlight++
			go func(m int, in any) {
				res, ex, err := r.execNode(ctx, sr, m, in)
				results <- finished{m, res, ex, err}
			}(m, in)
		}
		if inFlight == 0 {
			break
		}
		f := <-results
		inFlight--
		complete(f)
	}
	if firstErr != nil {
		return scopeResult{err: firstErr}
	}
	if r.halted() {
		return scopeResult{err: errHalt}
	}
	return scopeResult{output: r.bodyOutput(sc, st), exits: exits}
}

// bodyOutput is a finished scope's output: the outputs of the members
// that end it and ran (sources of edges back to a loop, or sinks).
func (r *run) bodyOutput(sc *scope, st map[int]*nodeState) any {
	var outs []any
	seen := map[int]bool{}
	for _, ei := range sc.exits {
		m := r.p.esrc[ei]
		if s := st[m]; s != nil && s.done && !seen[m] && s.ran {
			seen[m] = true
			outs = append(outs, s.output)
		}
	}
	for _, m := range sc.sinks {
		if s := st[m]; s != nil && s.done && !seen[m] && s.ran {
			seen[m] = true
			outs = append(outs, s.output)
		}
	}
	return merge(outs, "\n\n")
}

// merge combines several outputs into one input: one stays as it is,
// several join as text.
func merge(outs []any, sep string) any {
	switch len(outs) {
	case 0:
		return nil
	case 1:
		return outs[0]
	}
	parts := make([]string, 0, len(outs))
	for _, o := range outs {
		s, _ := transform.Text(o)
		parts = append(parts, s)
	}
	return strings.Join(parts, sep)
}

// inputOf is m's input: the entry input, or the outputs of the sources of
// its active incoming edges.
func (r *run) inputOf(sc *scope, st map[int]*nodeState, m int, entryInput any) any {
	if st[m].entry {
		return entryInput
	}
	var outs []any
	var seen []int
	for _, ei := range sc.in[m] {
		src := r.p.effective(r.p.esrc[ei], sc)
		s := st[src]
		if s == nil || !s.ran || slices.Contains(seen, src) || !r.edgeActive(src, ei, s) {
			continue
		}
		seen = append(seen, src)
		outs = append(outs, s.output)
	}
	return merge(outs, "\n\n")
}

// edgeActive reports whether edge ei, one of m's outgoing edges as its
// scope sees them, carries control after m ran with state s.
func (r *run) edgeActive(m, ei int, s *nodeState) bool {
	e := &r.p.edges[ei]
	pn := &r.p.nodes[m]
	if e.Source != pn.node.ID {
		// An edge that leaves m's body: active if the body activated it.
		return s.exits[ei]
	}
	if pn.handoff {
		return s.handoff != "" && s.handoff == e.Target
	}
	if e.SourceHandle != "" && pn.kind.Handles != nil {
		return e.SourceHandle == s.handle
	}
	return true
}

// execNode runs (or replays) one member execution.
func (r *run) execNode(ctx context.Context, sr *scopeRun, m int, in any) (Result, map[int]bool, error) {
	pn := &r.p.nodes[m]
	n := pn.node
	key := sr.prefix + n.ID
	if ctx.Err() != nil {
		return Result{}, nil, ctx.Err()
	}
	if steps := r.steps.Add(1); steps > int64(r.p.maxSteps) {
		err := fmt.Errorf("run exceeded max_steps (%d) at node %q; raise settings.max_steps or check the loop conditions", r.p.maxSteps, n.ID)
		r.halt(Outcome{Status: StatusFailed, Error: err.Error()}, true)
		return Result{}, nil, err
	}
	if s, ok := r.saved[key]; ok {
		res := Result{Output: s.Output, Handle: s.Handle}
		if pn.handoff {
			res.HandoffTo, res.Handle = s.Handle, ""
		}
		var ex map[int]bool
		if pn.kind.Compound == CompoundParallel {
			ex = replayExits(s)
		}
		r.afterNode(sr, pn, res.Output)
		return res, ex, nil
	}
	started := time.Now()
	r.emit(Event{Type: EventNodeStarted, NodeID: n.ID, Key: key, NodeType: n.Type})
	var (
		res Result
		ex  map[int]bool
		err error
	)
	ctx, endSpan := traceNode(ctx, n, key)
	switch {
	case n.Type == "start":
		res.Output = in
	case n.Type == "end":
		res.Output = in
	case pn.kind.Compound != "":
		res, ex, err = r.runCompound(ctx, sr, m, key, in)
	case pn.kind.Execute == nil:
		err = fmt.Errorf("node %q: kind %q cannot run: %s", n.ID, n.Type, pn.kind.Unavailable)
	default:
		x := &Exec{RunID: r.req.RunID, WorkspaceID: r.req.WorkspaceID, Actor: r.req.Actor, Node: n, Key: key, Input: in,
			Services: &r.e.svc, Hooks: r, programs: pn.programs, run: r}
		x.Data = transform.Data{Input: in, Vars: sr.vars}
		if pn.readsNodes {
			x.Data.Nodes = sr.snapshot()
		}
		if pn.handoff {
			for _, ei := range pn.outs {
				x.Handoffs = append(x.Handoffs, r.p.edges[ei].Target)
			}
		}
		if r.req.Emit != nil {
			x.emit = r.emit
		}
		res, err = safeExecute(ctx, pn.kind.Execute, x)
	}
	endSpan(res, err)
	if err != nil {
		if errors.Is(err, errHalt) {
			return Result{}, nil, err
		}
		var ce *ContractError
		if errors.As(err, &ce) {
			r.emit(Event{Type: EventNodeFailed, NodeID: n.ID, Key: key, NodeType: n.Type, Error: err.Error(), DurationMS: ms(time.Since(started))})
			r.halt(Outcome{Status: StatusFailedContract, Error: fmt.Sprintf("node %q: %s", n.ID, err), Contract: ce.Report}, true)
			return Result{}, nil, err
		}
		if ctx.Err() != nil {
			// Canceled from above (a finished "first" branch, the run's
			// timeout or its caller): the canceler decides the outcome.
			return Result{}, nil, ctx.Err()
		}
		err = fmt.Errorf("node %q (%s): %w", n.ID, n.Type, err)
		r.emit(Event{Type: EventNodeFailed, NodeID: n.ID, Key: key, NodeType: n.Type, Error: err.Error(), DurationMS: ms(time.Since(started))})
		r.halt(Outcome{Status: StatusFailed, Error: err.Error()}, true)
		return Result{}, nil, err
	}
	if res.Wait != nil {
		waitKey := key
		if res.Wait.Journal != "" {
			// The answer becomes a journal entry of the execution, which
			// runs again on resume and reads it with Recall.
			waitKey = key + JournalSep + res.Wait.Journal
		}
		r.emit(Event{Type: EventWaiting, NodeID: n.ID, Key: waitKey, NodeType: n.Type, Data: res.Wait})
		r.halt(Outcome{Status: StatusWaiting, WaitingNode: n.ID, WaitingKey: waitKey, Wait: res.Wait}, false)
		return Result{}, nil, errHalt
	}
	if r.req.Checkpoints != nil && n.Type != "start" && n.Type != "end" {
		handle := res.Handle
		if pn.handoff {
			handle = res.HandoffTo
		}
		if pn.kind.Compound == CompoundParallel {
			handle = exitHandle(ex)
		}
		if err := r.req.Checkpoints.Save(ctx, key, n.ID, Saved{Output: res.Output, Handle: handle}); err != nil {
			err = fmt.Errorf("node %q: save checkpoint: %w", n.ID, err)
			r.halt(Outcome{Status: StatusFailed, Error: err.Error()}, true)
			return Result{}, nil, err
		}
	}
	r.emit(Event{Type: EventNodeFinished, NodeID: n.ID, Key: key, NodeType: n.Type, DurationMS: ms(time.Since(started)),
		Output: res.Output, Handle: res.Handle + res.HandoffTo})
	r.afterNode(sr, pn, res.Output)
	return res, ex, nil
}

// afterNode records the output a finished top-level node leaves for the
// run's result.
func (r *run) afterNode(sr *scopeRun, pn *planNode, out any) {
	if sr.sc.owner >= 0 {
		return
	}
	r.mu.Lock()
	if pn.node.Type == "end" {
		r.final, r.finalSet = out, true
	} else if pn.node.Type != "start" {
		r.last = out
	}
	r.mu.Unlock()
}

// exitHandle encodes a parallel node's active exit edges as its
// checkpoint handle ("3,7"), so a replay activates the same joins.
func exitHandle(ex map[int]bool) string {
	var b strings.Builder
	for ei := range ex {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(ei))
	}
	return b.String()
}

// replayExits decodes exitHandle.
func replayExits(s Saved) map[int]bool {
	ex := map[int]bool{}
	for _, f := range strings.Split(s.Handle, ",") {
		if ei, err := strconv.Atoi(f); err == nil {
			ex[ei] = true
		}
	}
	return ex
}

// safeExecute turns an executor's panic into an error naming the node.
func safeExecute(ctx context.Context, f func(context.Context, *Exec) (Result, error), x *Exec) (res Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("executor panicked: %v", p)
		}
	}()
	return f(ctx, x)
}
