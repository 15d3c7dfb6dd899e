// Package run is the one way an agent is run for somebody. Every surface —
// the OpenAI-compatible /v1, the chat API, the MCP agent tools, the A2A
// executor, workflow agent and router nodes (on whichever process executes
// the run), and what comes later (AG-UI, LINE, autonomous agents) — asks a
// Runner for an agent, naming explicitly who asks (Caller), and runs the
// Agent it gets back. The Runner resolves the agent for the caller's
// workspace (its provider adapter then sends that workspace's stored
// credential), meters the time spent upstream, records one usage row per
// run (tokens, latency, surface, actor, end user, workflow run), scopes
// the run's guard and PII audit events to the caller, and puts the tool
// Gate in front of every server tool call.
//
//	r := run.New(p, nil)
//	a, err := r.Agent(ctx, run.Caller{Principal: pr, Surface: run.SurfaceOpenAI}, "helper")
//	if err != nil { ... errors.Is(err, run.ErrUnknownAgent) ... }
//	for ev, err := range a.Run(ctx, agent.Input{Messages: msgs}) { ... }
//
// Identity is an argument, never read from the context; the context the
// Runner hands the model chain carries the run's meter and audit scope,
// which only this package sets.
package run

import (
	"context"
	"errors"
	"iter"
	"slices"
	"time"

	"github.com/agentcraftlab/agentcraft/agent"
	"github.com/agentcraftlab/agentcraft/audit"
	"github.com/agentcraftlab/agentcraft/budget"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/provider"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/tool"
)

// ErrUnknownAgent reports a name that is not an agent of the caller's
// workspace. Every surface maps it to its own "not found".
var ErrUnknownAgent = platform.ErrUnknownAgent

// ActorKind is the kind of party a run acts for.
type ActorKind string

// Actor kinds.
const (
	ActorAPIKey      ActorKind = "apikey"   // an API key; ActorID is its id
	ActorOAuthClient ActorKind = "oauth"    // an OAuth client of /mcp; ActorID is its client id
	ActorUser        ActorKind = "user"     // a signed-in user; ActorID is the user id
	ActorExternal    ActorKind = "external" // an outside issuer's subject linked to no user (/mcp); ActorID is "<issuer>#<subject>"
	ActorSystem      ActorKind = "system"   // the server itself: a workflow run, a stdio MCP session
)

// Principal is who a run acts for.
type Principal struct {
	// WorkspaceID is the tenant whose agents, credentials and tools the
	// run uses. Required.
	WorkspaceID string
	// Actor and ActorID name the party that asked: an API key, an OAuth
	// client, a user, or the system. An empty Actor is ActorSystem.
	Actor   ActorKind
	ActorID string
	// EndUser is the person a front end says it asks for (Open WebUI's
	// user headers, the OpenAI "user" field); usage is attributed to it.
	EndUser string
	// UserID is the person on whose behalf the run happens: a signed-in
	// user, or the user an API key belongs to; "" when there is none.
	// Personal memory and conversations belong to (WorkspaceID, UserID)
	// when it is set (package memory, Owner).
	UserID string
}

// ActorString is the actor as usage rows and audit events name it:
// "apikey:<id>", "oauth:<client>", "user:<id>" or "system:<what>".
func (p Principal) ActorString() string {
	kind := p.Actor
	if kind == "" {
		kind = ActorSystem
	}
	id := p.ActorID
	if id == "" && kind == ActorSystem {
		id = "agentcraft"
	}
	return string(kind) + ":" + id
}

// Surface names the way an agent was run, as usage rows record it.
type Surface string

// Surfaces.
const (
	SurfaceOpenAI   Surface = "openai"   // POST /v1/chat/completions
	SurfaceChat     Surface = "chat"     // POST /api/chat, /api/chat/stream
	SurfaceMCP      Surface = "mcp"      // an agent_<name> tool of /mcp or mcp serve --stdio
	SurfaceA2A      Surface = "a2a"      // SendMessage and friends on /a2a/{agent}
	SurfaceWorkflow Surface = "workflow" // an agent or router node of a workflow run
	SurfaceAGUI     Surface = "agui"     // POST /agui/{agent}
	SurfaceTask     Surface = "task"     // the task service reading a request's intent (LINE, POST /api/tasks)
	SurfacePlanner  Surface = "planner"  // the planner model writing a FlowPlan (POST /api/planner/stream)
)

// Caller is who runs an agent, and through what.
type Caller struct {
	Principal
	Surface Surface
	// RunID is the workflow run an agent node belongs to; Workflow names
	// its workflow (usage is grouped by it).
	RunID    string
	Workflow string
	// ConversationID, when set, continues that stored conversation of the
	// caller's (Options.Conversations): Agent.Run sends the thread's
	// history (its summary and recent turns) before the input's messages,
	// and stores the input's new messages and the answer when the run
	// finishes, so every surface continues threads the same way.
	ConversationID string
	// ClientHistory says the input's messages are the whole conversation
	// as the client keeps it (Open WebUI resends every turn): the seam
	// then stores only the messages the thread does not hold yet and
	// sends them after the stored history, instead of repeating it.
	ClientHistory bool
}

// Options configure a Runner.
type Options struct {
	// Gate decides every server tool call of every run (capability
	// approvals). Default nil: every call runs.
	Gate agent.Gate
	// CallerGate, when set, is asked for the gate of each bound agent
	// instead (it must know whose run it decides for); it wins over Gate.
	CallerGate CallerGate
	// Conversations keeps the threads callers continue
	// (Caller.ConversationID); package memory implements it. Default
	// nil: a caller naming a conversation gets an error.
	Conversations Conversations
	// Memory gives agents whose spec enables memory their memory tools,
	// bound to the caller; package memory implements it. Default nil: no
	// memory tools.
	Memory MemoryTools
}

// CallerGate is a Gate that must know whose run it decides for (package
// task's, which turns a held call into a task of the caller's): the
// Runner asks it for the gate of each bound agent.
type CallerGate interface {
	For(c Caller, agentName string) agent.Gate
}

// Conversations is the store of threads the seam continues.
type Conversations interface {
	// Begin returns the messages to send for a run that continues the
	// caller's conversation id with input (with h.ClientHistory, the
	// whole conversation as the client keeps it), compacting the
	// thread when it outgrows h.BudgetTokens, and the messages of input
	// that are new to the thread, for Finish. A conversation that is not
	// the caller's is an error wrapping store.ErrNotFound.
	Begin(ctx context.Context, p Principal, id string, input []llm.Message, h History) (send, fresh []llm.Message, err error)
	// Finish appends the messages of a finished run to the conversation.
	Finish(ctx context.Context, p Principal, id string, msgs []llm.Message) error
}

// History is how a run reads its conversation.
type History struct {
	// ClientHistory is Caller.ClientHistory.
	ClientHistory bool
	// BudgetTokens bounds the estimated size of the history sent; 0 is
	// the implementation's default.
	BudgetTokens int
	// Summarizer writes the summary that compaction stores: the agent's
	// model, each call metered and recorded as a run of its own;
	// ModelID is its llm.Request.Model.
	Summarizer llm.Model
	ModelID    string
}

// MemoryTools builds the memory tools of an agent whose spec enables
// memory (store.AgentMemory), bound to the caller: the tools read and
// write only what the principal may, whatever the model asks.
type MemoryTools interface {
	Tools(p Principal, conversationID string, def *platform.Agent) []tool.Tool
}

// Runner resolves and runs agents for callers. It is safe for concurrent
// use.
type Runner struct {
	p          *platform.Platform
	gate       agent.Gate
	callerGate CallerGate
	conv       Conversations
	memory     MemoryTools
}

// New returns a Runner over p's agents. p must outlive it.
func New(p *platform.Platform, opts *Options) *Runner {
	r := &Runner{p: p}
	if opts != nil {
		r.gate, r.callerGate, r.conv, r.memory = opts.Gate, opts.CallerGate, opts.Conversations, opts.Memory
	}
	return r
}

// Agent resolves the caller's agent called name, to run it. An unknown
// name gives an error wrapping ErrUnknownAgent; a workspace that has spent
// a monthly budget gets an *llm.Error of kind llm.KindQuota (HTTP 429)
// before any model is called (package budget). Only what runs asks here:
// what only describes an agent (an A2A card, /v1/models) reads it from
// the platform (platform.Platform.Agent), which no budget refuses.
func (r *Runner) Agent(ctx context.Context, c Caller, name string) (*Agent, error) {
	// The budget first: a spent workspace is refused whatever it names,
	// so /v1's workflow/<name> models (not agents) are refused too.
	if err := r.admit(ctx, c); err != nil {
		return nil, err
	}
	def, err := r.p.Agent(ctx, c.WorkspaceID, name)
	if err != nil {
		return nil, err
	}
	return r.bind(c, def), nil
}

// Inline builds an agent that is not stored (a workflow node's inline
// configuration) for the caller, to run it; its budget is checked as
// Agent's is.
func (r *Runner) Inline(ctx context.Context, c Caller, row store.Agent) (*Agent, error) {
	if err := r.admit(ctx, c); err != nil {
		return nil, err
	}
	def, err := r.p.InlineAgent(ctx, c.WorkspaceID, row)
	if err != nil {
		return nil, err
	}
	return r.bind(c, def), nil
}

// admit is the one place a run is refused before it starts: a caller
// without a workspace, or a workspace that has spent its monthly budget.
func (r *Runner) admit(ctx context.Context, c Caller) error {
	if c.WorkspaceID == "" {
		return errors.New("run: caller has no workspace")
	}
	return r.p.Budgets().Check(ctx, c.WorkspaceID)
}

func (r *Runner) bind(c Caller, def *platform.Agent) *Agent {
	a := &Agent{Def: def, r: r, caller: c}
	rt := *def.Runtime
	rt.Observe = a.observe
	if r.callerGate != nil {
		rt.Gate = r.callerGate.For(c, def.Row.Name)
	} else if r.gate != nil {
		rt.Gate = r.gate
	}
	if m := def.Row.Params.Memory; m != nil && m.Enabled && r.memory != nil {
		rt.Tools = append(slices.Clip(rt.Tools), r.memory.Tools(c.Principal, c.ConversationID, def)...)
	}
	a.Runtime = &rt
	return a
}

// Agent is an agent bound to one caller. Run it as often as needed; each
// run is metered and recorded on its own.
type Agent struct {
	// Def is the resolved definition: its stored row, provider and model.
	Def *platform.Agent
	// Runtime runs the tool loop, bound to the caller. A surface that
	// changes a setting for one request (temperature, say) copies it,
	// sets the copy here and calls Run (the copy stays bound; Run adds
	// the caller's conversation).
	Runtime *agent.Agent

	r      *Runner
	caller Caller
	// meter is every run's upstream time; it lives in the Agent, so
	// binding costs one allocation less.
	meter provider.Meter
}

// Run runs the agent's tool loop (agent.Agent.Run), in the caller's
// conversation when it names one (Caller.ConversationID).
func (a *Agent) Run(ctx context.Context, in agent.Input) iter.Seq2[agent.Event, error] {
	if a.caller.ConversationID == "" {
		return a.Runtime.Run(ctx, in)
	}
	return a.inConversation(ctx, in)
}

// Generate runs the agent and collects the answer (agent.Agent.Generate),
// in the caller's conversation when it names one.
func (a *Agent) Generate(ctx context.Context, in agent.Input) (agent.Result, error) {
	return agent.Collect(a.Run(ctx, in))
}

// Upstream is the time the agent's runs have spent waiting on providers.
func (a *Agent) Upstream() time.Duration { return a.meter.Upstream() }

// Direct answers req with the agent's bare model — no instructions, no
// tools — as one metered, recorded run (Open WebUI's background tasks go
// this way). buffered asks the provider for one answer instead of a stream.
func (a *Agent) Direct(ctx context.Context, req llm.Request, buffered bool) iter.Seq2[agent.Event, error] {
	return func(yield func(agent.Event, error) bool) {
		ctx, done := a.observe(ctx)
		end := agent.RunEnd{Err: context.Canceled, Steps: 1}
		defer func() { done(end) }()
		var upstream iter.Seq2[llm.Event, error]
		if buffered {
			resp, err := a.Def.Runtime.Model.Generate(ctx, req)
			if err != nil {
				end.Err = err
				yield(agent.Event{}, err)
				return
			}
			upstream = llm.Events(resp)
		} else {
			upstream = a.Def.Runtime.Model.Stream(ctx, req)
		}
		for ev, err := range upstream {
			if err != nil {
				end.Err = err
				yield(agent.Event{}, err)
				return
			}
			var out agent.Event
			switch ev.Type {
			case llm.EventTextDelta:
				out = agent.Event{Type: agent.EventTextDelta, Text: ev.Text}
			case llm.EventFinish:
				var u llm.Usage
				if ev.Usage != nil {
					u = *ev.Usage
				}
				end = agent.RunEnd{Usage: u, Steps: 1, FinishReason: ev.FinishReason}
				out = agent.Event{Type: agent.EventFinish, FinishReason: ev.FinishReason, Usage: &u, Steps: 1}
			default:
				continue
			}
			if !yield(out, nil) {
				return
			}
		}
	}
}

// Refused records a request for this agent that failed before it could
// run (an attachment that could not be read, say), so that usage shows
// every request the agent was asked, as a failed one.
func (a *Agent) Refused(err error) {
	a.record(time.Now(), 0, agent.RunEnd{Err: err})
}

// observe is the bound runtime's agent.Agent.Observe: the run's context
// carries the meter and the caller's audit scope, and its end is recorded.
func (a *Agent) observe(ctx context.Context) (context.Context, func(agent.RunEnd)) {
	start := time.Now()
	up0 := a.meter.Upstream()
	ctx, endSpan := a.traceRun(ctx)
	ctx = provider.ContextWithMeter(ctx, &a.meter)
	ctx = audit.WithScope(ctx, audit.Scope{WorkspaceID: a.caller.WorkspaceID, Actor: a.caller.ActorString()})
	// The run's model calls are charged to a hold until its usage record
	// counts them (package budget), so a budget spent mid-run stops it.
	hold := a.r.p.Budgets().Hold(a.caller.WorkspaceID)
	ctx = budget.WithHold(ctx, hold)
	return ctx, func(end agent.RunEnd) {
		a.record(start, a.meter.Upstream()-up0, end)
		hold.Release()
		endSpan(end)
	}
}

func (a *Agent) record(start time.Time, upstream time.Duration, end agent.RunEnd) {
	c := a.caller
	rec := store.UsageRecord{
		WorkspaceID:  c.WorkspaceID,
		Agent:        a.Def.Row.Name,
		Model:        a.Def.ModelID,
		Provider:     a.Def.Provider,
		User:         c.EndUser,
		InputTokens:  end.Usage.InputTokens,
		OutputTokens: end.Usage.OutputTokens,
		CachedTokens: end.Usage.CachedTokens,
		LatencyMs:    int(time.Since(start).Milliseconds()),
		UpstreamMs:   int(max(0, upstream).Milliseconds()),
		Status:       store.StatusOK,
		Surface:      string(c.Surface),
		Actor:        c.ActorString(),
		RunID:        c.RunID,
		Workflow:     c.Workflow,
		CreatedAt:    start,
	}
	// Priced where the row is made, so every surface's rows carry a cost.
	var priced bool
	rec.Cost, priced = a.r.p.Cost(a.Def.Provider, a.Def.ModelID, end.Usage)
	rec.Unpriced = !priced
	if c.Actor == ActorAPIKey {
		rec.APIKeyID = c.ActorID
	}
	if end.Err != nil {
		rec.Status = store.StatusError
		rec.ErrorKind = string(llm.KindOf(end.Err))
	}
	a.r.p.RecordUsage(rec)
}

// PrincipalOf is the principal of an HTTP request that the server's
// authentication resolved: the API key as actor (acting for its user, if
// it has one), the signed-in user, or the system when authentication is
// off.
func PrincipalOf(p platform.Principal) Principal {
	out := Principal{WorkspaceID: p.WorkspaceID, EndUser: p.User, UserID: p.UserID}
	switch {
	case p.APIKeyID != "":
		out.Actor, out.ActorID = ActorAPIKey, p.APIKeyID
	case p.UserID != "":
		out.Actor, out.ActorID = ActorUser, p.UserID
	default:
		out.Actor, out.ActorID = ActorSystem, "no-auth"
	}
	return out
}
