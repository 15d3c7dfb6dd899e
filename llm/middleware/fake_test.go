package middleware

import (
	"context"
	"iter"
	"sync"
	"testing"

	"github.com/agentcraftlab/agentcraft/llm"
)

// reply is one scripted answer of fakeModel: events are yielded in order,
// then err, if any.
type reply struct {
	events []llm.Event
	err    error
	// before, when set, runs at the start of the call, e.g. to cancel ctx.
	before func()
}

// fakeModel answers the i-th call with the i-th reply.
type fakeModel struct {
	t       testing.TB
	mu      sync.Mutex
	replies []reply       // guarded by mu
	reqs    []llm.Request // guarded by mu
}

func newFake(t testing.TB, replies ...reply) *fakeModel {
	return &fakeModel{t: t, replies: replies}
}

func (f *fakeModel) next(req llm.Request) reply {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reqs = append(f.reqs, req)
	if len(f.replies) == 0 {
		f.t.Errorf("fake model: unexpected call %d", len(f.reqs))
		return reply{err: &llm.Error{Kind: llm.KindInternal, Message: "script exhausted"}}
	}
	r := f.replies[0]
	f.replies = f.replies[1:]
	if r.before != nil {
		r.before()
	}
	return r
}

func (f *fakeModel) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.reqs)
}

func (f *fakeModel) Generate(_ context.Context, req llm.Request) (llm.Response, error) {
	r := f.next(req)
	resp := llm.Response{Message: llm.Message{Role: llm.RoleAssistant}}
	var text string
	for _, ev := range r.events {
		switch ev.Type {
		case llm.EventTextDelta:
			text += ev.Text
		case llm.EventToolCallDelta:
			d := ev.ToolCall
			for len(resp.Message.ToolCalls) <= d.Index {
				resp.Message.ToolCalls = append(resp.Message.ToolCalls, llm.ToolCall{})
			}
			c := &resp.Message.ToolCalls[d.Index]
			c.ID += d.ID
			c.Name += d.Name
			c.Arguments += d.ArgumentsDelta
		case llm.EventFinish:
			resp.FinishReason = ev.FinishReason
			if ev.Usage != nil {
				resp.Usage = *ev.Usage
			}
		}
	}
	if text != "" {
		resp.Message.Content = []llm.Part{{Type: llm.PartText, Text: text}}
	}
	return resp, r.err
}

func (f *fakeModel) Stream(_ context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		r := f.next(req)
		for _, ev := range r.events {
			if !yield(ev, nil) {
				return
			}
		}
		if r.err != nil {
			yield(llm.Event{}, r.err)
		}
	}
}

// answer is a reply streaming text and finishing with usage.
func answer(text string) reply {
	return reply{events: []llm.Event{
		{Type: llm.EventTextDelta, Text: text},
		{Type: llm.EventFinish, FinishReason: llm.FinishStop, Usage: &llm.Usage{InputTokens: 10, OutputTokens: 3, CachedTokens: 4}},
	}}
}

// failure is a reply failing before any event with an upstream status.
func failure(status int) reply {
	return reply{err: &llm.Error{Kind: llm.KindForStatus(status), Provider: "openai", Status: status, Message: "upstream said no"}}
}

// drain reads a stream, returning the text and the error.
func drain(seq iter.Seq2[llm.Event, error]) (string, error) {
	var text string
	for ev, err := range seq {
		if err != nil {
			return text, err
		}
		text += ev.Text
	}
	return text, nil
}
