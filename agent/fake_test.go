package agent

import (
	"context"
	"encoding/json"
	"iter"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/tool"
)

// turn is one scripted model answer: events, then err if set.
type turn struct {
	events []llm.Event
	err    error
}

// fakeModel answers the n-th Stream call with respond(n, req) and records
// the requests.
type fakeModel struct {
	t       testing.TB
	respond func(n int, req llm.Request) turn

	mu        sync.Mutex
	reqs      []llm.Request // guarded by mu
	generates int           // calls through Generate; guarded by mu
}

// script returns a model answering with turns in order.
func script(t testing.TB, turns ...turn) *fakeModel {
	return &fakeModel{t: t, respond: func(n int, _ llm.Request) turn {
		if n >= len(turns) {
			t.Errorf("fake model: unexpected call %d", n+1)
			return turn{err: &llm.Error{Kind: llm.KindInternal, Message: "script exhausted"}}
		}
		return turns[n]
	}}
}

func (f *fakeModel) requests() []llm.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]llm.Request(nil), f.reqs...)
}

func (f *fakeModel) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	f.mu.Lock()
	f.generates++
	f.mu.Unlock()
	return llm.Collect(f.Stream(ctx, req))
}

func (f *fakeModel) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		f.mu.Lock()
		n := len(f.reqs)
		f.reqs = append(f.reqs, req)
		f.mu.Unlock()
		if err := ctx.Err(); err != nil {
			yield(llm.Event{}, err)
			return
		}
		tr := f.respond(n, req)
		for _, ev := range tr.events {
			if !yield(ev, nil) {
				return
			}
		}
		if tr.err != nil {
			yield(llm.Event{}, tr.err)
		}
	}
}

func text(s string) llm.Event { return llm.Event{Type: llm.EventTextDelta, Text: s} }

func finish(reason llm.FinishReason, in, out int) llm.Event {
	return llm.Event{Type: llm.EventFinish, FinishReason: reason, Usage: &llm.Usage{InputTokens: in, OutputTokens: out}}
}

// call streams one tool call: id and name first, then the argument
// fragments.
func call(index int, id, name string, args ...string) []llm.Event {
	evs := []llm.Event{{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: index, ID: id, Name: name}}}
	for _, a := range args {
		evs = append(evs, llm.Event{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: index, ArgumentsDelta: a}})
	}
	return evs
}

// events concatenates event lists.
func events(parts ...any) []llm.Event {
	var out []llm.Event
	for _, p := range parts {
		switch p := p.(type) {
		case llm.Event:
			out = append(out, p)
		case []llm.Event:
			out = append(out, p...)
		}
	}
	return out
}

// funcTool is a Tool running fn.
type funcTool struct {
	name  string
	fn    func(ctx context.Context, args json.RawMessage) (tool.Result, error)
	calls atomic.Int32
}

func newTool(name string, fn func(ctx context.Context, args json.RawMessage) (tool.Result, error)) *funcTool {
	return &funcTool{name: name, fn: fn}
}

func (f *funcTool) Name() string                { return f.name }
func (f *funcTool) Description() string         { return "test tool " + f.name }
func (f *funcTool) Schema() json.RawMessage     { return json.RawMessage(`{"type":"object"}`) }
func (f *funcTool) Capability() tool.Capability { return tool.CapabilityLow }
func (f *funcTool) Call(ctx context.Context, args json.RawMessage) (tool.Result, error) {
	f.calls.Add(1)
	return f.fn(ctx, args)
}

// collect drains a run.
func collect(seq iter.Seq2[Event, error]) ([]Event, error) {
	var out []Event
	for ev, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
	return out, nil
}
