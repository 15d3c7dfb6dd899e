package agent

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/tool"
)

// Run streams one exchange: text and client tool call fragments as the
// model produces them, progress of the server tools it runs, and a final
// EventFinish. An error ends the stream; errors from the model are
// yielded unchanged, so an *llm.Error keeps its Kind. Breaking out of the
// loop cancels the model request and any running tools, and waits for
// them.
//
// A step whose answer calls both client and server tools ends the run
// with the client calls only; the server calls are dropped, not run.
// The client will answer with a transcript holding the assistant message
// as it saw it — only the client calls — and their results: results of
// server calls would have no call to belong to there, and running the
// calls without returning their results would make their side effects
// invisible to the model. The model sees the client results in the next
// request and calls the server tools again if it still needs them.
//
// When the model still calls tools at its MaxSteps-th model call, the run
// does not execute them: it ends with the text "Stopped at the step limit
// (max_steps N) without a final answer: …" saying how many steps ran
// tools and which calls were not run, and finish reason length, the reason OpenAI
// clients already treat as "the answer was cut short by a limit". A run
// whose TokenBudget is spent by a step that calls tools ends the same way,
// with the text "Stopped after using N tokens, over this run's budget of
// B, without a final answer."
//
// Each server tool call runs with its timeout (ToolTimeout,
// ToolTimeouts). Whatever goes wrong in a call — an unknown tool,
// arguments that are not JSON or do not match the tool's schema, a Go
// error, a panic, a timeout — becomes an error result the model reads and
// can recover from; the run goes on. Arguments pass through
// tool.CheckArguments first, which repairs a code fence or trailing
// commas. Results longer than MaxToolResultBytes are cut, with a note
// telling the model so.
//
// Text of successive steps is separated by a blank line in the stream, so
// that "Let me check." and "It is 3 pm." do not run together.
func (a *Agent) Run(ctx context.Context, in Input) iter.Seq2[Event, error] {
	if a.Observe == nil {
		return a.run(ctx, in, nil)
	}
	return func(yield func(Event, error) bool) {
		ctx, done := a.Observe(ctx)
		end := RunEnd{Err: context.Canceled}
		var r *run
		defer func() {
			if end.Err != nil && r != nil {
				// The calls made before the run failed or was stopped
				// were spent: their tokens are the run's usage.
				end.Usage = r.usage
			}
			done(end)
		}()
		for ev, err := range a.run(ctx, in, &r) {
			switch {
			case err != nil:
				end.Err = err
			case ev.Type == EventFinish:
				end = RunEnd{Steps: ev.Steps, FinishReason: ev.FinishReason}
				if ev.Usage != nil {
					end.Usage = *ev.Usage
				}
			}
			if !yield(ev, err) {
				if err == nil && ev.Type != EventFinish {
					end.Err = context.Canceled
				}
				return
			}
		}
	}
}

// run runs the agent; *state, when state is set, gets the run's state
// once it has started.
func (a *Agent) run(ctx context.Context, in Input, state **run) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		r, err := a.start(in)
		if err != nil {
			yield(Event{}, err)
			return
		}
		if state != nil {
			*state = r
		}
		for _, w := range a.Warnings {
			if !yield(Event{Type: EventWarning, Text: w}, nil) {
				return
			}
		}
		r.loop(ctx, yield)
	}
}

// run is the state of one Run.
type run struct {
	a        *Agent
	logger   *slog.Logger
	tools    map[string]tool.Tool
	client   map[string]bool // client tool names
	maxSteps int
	budget   int // token budget; 0: none
	maxBytes int // tool result limit; 0: none
	req      llm.Request
	added    []llm.Message // messages the run appended to the conversation
	usage    llm.Usage
	// lastText is the last text fragment yielded; newBlock is set when a
	// step ended since. Together they place the blank line between steps.
	lastText string
	newBlock bool
	buffered bool // see Input.Buffered
}

func (a *Agent) start(in Input) (*run, error) {
	tools, err := a.toolIndex()
	if err != nil {
		return nil, err
	}
	r := &run{
		a:        a,
		logger:   a.Logger,
		tools:    tools,
		client:   make(map[string]bool, len(in.ClientTools)),
		maxSteps: a.MaxSteps,
		buffered: in.Buffered,
	}
	if r.logger == nil {
		r.logger = slog.New(slog.DiscardHandler)
	}
	if r.maxSteps <= 0 {
		r.maxSteps = DefaultMaxSteps
	}
	if in.MaxSteps > 0 {
		r.maxSteps = min(r.maxSteps, in.MaxSteps)
	}
	r.budget = max(a.TokenBudget, 0)
	if in.TokenBudget > 0 && (r.budget == 0 || in.TokenBudget < r.budget) {
		r.budget = in.TokenBudget
	}
	switch {
	case a.MaxToolResultBytes == 0:
		r.maxBytes = DefaultMaxToolResultBytes
	case a.MaxToolResultBytes > 0:
		r.maxBytes = a.MaxToolResultBytes
	}
	defs := make([]llm.ToolDef, 0, len(a.Tools)+len(in.ClientTools))
	for _, t := range a.Tools {
		defs = append(defs, tool.Def(t))
	}
	for _, d := range in.ClientTools {
		switch {
		case tools[d.Name] != nil:
			return nil, &llm.Error{Kind: llm.KindCaller, Message: fmt.Sprintf("tool %q clashes with a tool of agent %q: rename the client tool", d.Name, a.Name)}
		case r.client[d.Name]:
			return nil, &llm.Error{Kind: llm.KindCaller, Message: fmt.Sprintf("tool %q is defined twice: send each tool once", d.Name)}
		}
		if err := tool.ValidateName(d.Name); err != nil {
			return nil, &llm.Error{Kind: llm.KindCaller, Message: "client tool: " + err.Error()}
		}
		r.client[d.Name] = true
		defs = append(defs, d)
	}
	msgs := make([]llm.Message, 0, len(in.Messages)+5)
	if a.Instructions != "" {
		msgs = append(msgs, llm.Text(llm.RoleSystem, a.Instructions))
	}
	msgs = append(msgs, in.Messages...)
	if len(defs) == 0 {
		defs = nil
	}
	r.req = llm.Request{
		Model:       a.ModelID,
		Messages:    msgs,
		Tools:       defs,
		ToolChoice:  in.ToolChoice,
		Temperature: a.Temperature,
		MaxTokens:   a.MaxTokens,
		User:        in.User,
	}
	return r, nil
}

func (r *run) loop(ctx context.Context, yield func(Event, error) bool) {
	for step := 1; ; step++ {
		t, ok := r.turn(ctx, step, yield)
		if !ok {
			return
		}
		r.newBlock = true
		if t.usage != nil {
			r.usage = r.usage.Add(*t.usage)
		}
		reply := llm.Message{Role: llm.RoleAssistant}
		if t.text.Len() > 0 {
			reply.Content = []llm.Part{{Type: llm.PartText, Text: t.text.String()}}
		}
		calls := t.sortedCalls()
		switch {
		case len(calls) == 0:
			r.added = append(r.added, reply)
			reason := cmp.Or(t.finish, llm.FinishStop)
			if reason == llm.FinishToolCalls {
				reason = llm.FinishStop // no call survived: nothing for the client to run
			}
			r.finish(step, reason, yield)
			return

		case t.clientCalls > 0:
			for _, c := range calls {
				if c.client {
					reply.ToolCalls = append(reply.ToolCalls, c.toolCall())
				}
			}
			r.added = append(r.added, reply)
			r.finish(step, llm.FinishToolCalls, yield)
			return

		case step >= r.maxSteps:
			note := stepLimitNote(step, calls)
			r.logger.LogAttrs(ctx, slog.LevelWarn, "agent step limit reached",
				slog.String("agent", r.a.Name), slog.Int("steps", step))
			r.stop(step, t, reply, note, yield)
			return

		case r.budget > 0 && r.usage.Total() >= r.budget:
			note := fmt.Sprintf("Stopped after using %d tokens, over this run's budget of %d, without a final answer.", r.usage.Total(), r.budget)
			r.logger.LogAttrs(ctx, slog.LevelWarn, "agent token budget spent",
				slog.String("agent", r.a.Name), slog.Int("steps", step),
				slog.Int("tokens", r.usage.Total()), slog.Int("budget", r.budget))
			r.stop(step, t, reply, note, yield)
			return
		}

		for _, c := range calls {
			reply.ToolCalls = append(reply.ToolCalls, c.toolCall())
		}
		results, ok := r.runTools(ctx, step, reply.ToolCalls, yield)
		if !ok {
			return
		}
		if err := ctx.Err(); err != nil {
			yield(Event{}, fmt.Errorf("agent: run tools: %w", err))
			return
		}
		stepMsgs := make([]llm.Message, 0, 1+len(results))
		stepMsgs = append(stepMsgs, reply)
		for i, c := range reply.ToolCalls {
			stepMsgs = append(stepMsgs, llm.ToolResult(c.ID, results[i].Content, results[i].IsError))
		}
		r.added = append(r.added, stepMsgs...)
		r.req.Messages = append(r.req.Messages, stepMsgs...)
		r.req.ToolChoice = ""
	}
}

// stop ends the run at a limit: the step's calls are not run (no model
// call would read their results), note follows the step's text, and the
// finish reason is length.
func (r *run) stop(step int, t *turnState, reply llm.Message, note string, yield func(Event, error) bool) {
	if !r.text(step, note, yield) {
		return
	}
	reply.Content = []llm.Part{{Type: llm.PartText, Text: joinText(t.text.String(), note)}}
	r.added = append(r.added, reply)
	r.finish(step, llm.FinishLength, yield)
}

func (r *run) finish(step int, reason llm.FinishReason, yield func(Event, error) bool) {
	usage := r.usage
	yield(Event{Type: EventFinish, Step: step, FinishReason: reason, Usage: &usage, Steps: step, Messages: r.added}, nil)
}

// text yields a text fragment. The first fragment after a step ended
// starts with what joinText puts between blocks.
func (r *run) text(step int, s string, yield func(Event, error) bool) bool {
	if s == "" {
		return true
	}
	if r.newBlock && r.lastText != "" {
		s = joinText(r.lastText, s)[len(r.lastText):]
	}
	r.newBlock = false
	r.lastText = s
	return yield(Event{Type: EventTextDelta, Step: step, Text: s}, nil)
}

// joinText joins two texts with a blank line unless one is empty.
func joinText(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	case strings.HasSuffix(a, "\n\n"):
		return a + b
	case strings.HasSuffix(a, "\n"):
		return a + "\n" + b
	}
	return a + "\n\n" + b
}

// turnState collects one model answer.
type turnState struct {
	text        strings.Builder
	calls       map[int]*pendingCall // by upstream index
	clientCalls int
	finish      llm.FinishReason
	usage       *llm.Usage
}

// pendingCall is a tool call being streamed.
type pendingCall struct {
	index    int
	id, name string
	args     strings.Builder
	// decided is set once the name is known; client then says whose call
	// it is, and clientIndex is its index among the turn's client calls.
	decided     bool
	client      bool
	clientIndex int
}

func (c *pendingCall) toolCall() llm.ToolCall {
	return llm.ToolCall{ID: c.id, Name: c.name, Arguments: c.args.String()}
}

func (t *turnState) sortedCalls() []*pendingCall {
	return slices.SortedFunc(maps.Values(t.calls), func(a, b *pendingCall) int { return a.index - b.index })
}

// turn streams one model call, forwarding what the client may see. It
// returns false when the run must stop (error yielded, or consumer gone).
func (r *run) turn(ctx context.Context, step int, yield func(Event, error) bool) (*turnState, bool) {
	t := &turnState{calls: make(map[int]*pendingCall)}
	finished := false
	events := r.a.Model.Stream
	if r.buffered {
		events = r.generate
	}
	for ev, err := range events(ctx, r.req) {
		if err != nil {
			yield(Event{}, err)
			return nil, false
		}
		switch ev.Type {
		case llm.EventTextDelta:
			if ev.Text == "" {
				continue
			}
			t.text.WriteString(ev.Text)
			if !r.text(step, ev.Text, yield) {
				return nil, false
			}
		case llm.EventReasoningDelta:
			if !yield(Event{Type: EventReasoningDelta, Step: step, Text: ev.Text}, nil) {
				return nil, false
			}
		case llm.EventToolCallDelta:
			if !r.callDelta(step, t, ev.ToolCall, yield) {
				return nil, false
			}
		case llm.EventFinish:
			finished = true
			t.finish = ev.FinishReason
			t.usage = ev.Usage
		}
	}
	if !finished {
		yield(Event{}, errNoFinish)
		return nil, false
	}
	for _, c := range t.calls {
		if c.id == "" {
			c.id = fmt.Sprintf("call_%d_%d", step, c.index)
		}
	}
	return t, true
}

// generate asks the model for a whole answer and replays it as events.
func (r *run) generate(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	resp, err := r.a.Model.Generate(ctx, req)
	if err != nil {
		return func(yield func(llm.Event, error) bool) { yield(llm.Event{}, err) }
	}
	return llm.Events(resp)
}

// callDelta folds one tool call fragment in and forwards it when the call
// is a client's. Server calls are decided by name on their first named
// fragment and never forwarded.
func (r *run) callDelta(step int, t *turnState, d *llm.ToolCallDelta, yield func(Event, error) bool) bool {
	if d == nil || d.Index < 0 {
		return true
	}
	c := t.calls[d.Index]
	if c == nil {
		c = &pendingCall{index: d.Index}
		t.calls[d.Index] = c
	}
	if d.ID != "" {
		c.id = d.ID
	}
	if d.Name != "" {
		c.name = d.Name
	}
	c.args.WriteString(d.ArgumentsDelta)
	if !c.decided {
		if c.name == "" {
			return true // wait for the name; the fragment is kept in c
		}
		c.decided = true
		c.client = r.client[c.name]
		if !c.client {
			return true
		}
		c.clientIndex = t.clientCalls
		t.clientCalls++
		if c.id == "" {
			// The client needs an id to answer the call with.
			c.id = fmt.Sprintf("call_%d_%d", step, c.index)
		}
		// The first forwarded fragment carries everything buffered so far.
		return yield(Event{Type: EventToolCallDelta, Step: step, ToolCall: &llm.ToolCallDelta{
			Index: c.clientIndex, ID: c.id, Name: c.name, ArgumentsDelta: c.args.String(),
		}}, nil)
	}
	if !c.client {
		return true
	}
	return yield(Event{Type: EventToolCallDelta, Step: step, ToolCall: &llm.ToolCallDelta{
		Index: c.clientIndex, ID: d.ID, ArgumentsDelta: d.ArgumentsDelta,
	}}, nil)
}

// stepLimitNote says why a run stopped at its step limit: step model calls
// were made, the steps before the last ran tools, and the last one's calls
// were not run. With max_steps 1 no tool ran at all, which "after 1 tool
// steps" used to hide.
func stepLimitNote(step int, calls []*pendingCall) string {
	var names []string
	for _, c := range calls {
		if !slices.Contains(names, c.name) {
			names = append(names, c.name)
		}
	}
	slices.Sort(names)
	ran := "no tool ran"
	switch step - 1 {
	case 0:
	case 1:
		ran = "tools ran in 1 step"
	default:
		ran = fmt.Sprintf("tools ran in %d steps", step-1)
	}
	last := "tool call (" + strings.Join(names, ", ") + ") was"
	if len(calls) > 1 {
		last = fmt.Sprintf("%d tool calls (%s) were", len(calls), strings.Join(names, ", "))
	}
	return fmt.Sprintf("Stopped at the step limit (max_steps %d) without a final answer: %s; the model's last %s not run.", step, ran, last)
}
