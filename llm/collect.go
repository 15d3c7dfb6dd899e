package llm

import (
	"iter"
	"strings"
)

// Accumulator folds stream events into a Response. The zero value is ready.
type Accumulator struct {
	text     strings.Builder
	calls    []ToolCall
	args     []*strings.Builder // pointers: a Builder must not be copied when the slice grows
	resp     Response
	finished bool
}

// Add folds one event in.
func (a *Accumulator) Add(ev Event) {
	switch ev.Type {
	case EventTextDelta:
		a.text.WriteString(ev.Text)
	case EventToolCallDelta:
		d := ev.ToolCall
		if d == nil || d.Index < 0 {
			return
		}
		for len(a.calls) <= d.Index {
			a.calls = append(a.calls, ToolCall{})
			a.args = append(a.args, new(strings.Builder))
		}
		if d.ID != "" {
			a.calls[d.Index].ID = d.ID
		}
		if d.Name != "" {
			a.calls[d.Index].Name = d.Name
		}
		a.args[d.Index].WriteString(d.ArgumentsDelta)
	case EventFinish:
		a.finished = true
		a.resp.FinishReason = ev.FinishReason
		if ev.Usage != nil {
			a.resp.Usage = *ev.Usage
		}
		if ev.ID != "" {
			a.resp.ID = ev.ID
		}
		if ev.Model != "" {
			a.resp.Model = ev.Model
		}
	}
}

// Finished reports whether an EventFinish was added.
func (a *Accumulator) Finished() bool { return a.finished }

// Response returns the answer accumulated so far.
func (a *Accumulator) Response() Response {
	r := a.resp
	r.Message = Message{Role: RoleAssistant}
	if a.text.Len() > 0 {
		r.Message.Content = []Part{{Type: PartText, Text: a.text.String()}}
	}
	for i, c := range a.calls {
		c.Arguments = a.args[i].String()
		r.Message.ToolCalls = append(r.Message.ToolCalls, c)
	}
	return r
}

// Collect drains a stream into a Response. A stream that ends without an
// EventFinish is reported as ErrIncompleteStream.
func Collect(seq iter.Seq2[Event, error]) (Response, error) {
	var a Accumulator
	for ev, err := range seq {
		if err != nil {
			return a.Response(), err
		}
		a.Add(ev)
	}
	if !a.Finished() {
		return a.Response(), &Error{Kind: KindProvider, Message: "stream ended without a finish event", Err: ErrIncompleteStream}
	}
	return a.Response(), nil
}

// Events replays a whole Response as the stream that would have produced
// it: its text as one delta, each tool call as one delta, then the finish
// event. Code written against streams serves a Generate answer this way.
func Events(resp Response) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if text := resp.Message.Text(); text != "" {
			if !yield(Event{Type: EventTextDelta, Text: text}, nil) {
				return
			}
		}
		for i, c := range resp.Message.ToolCalls {
			d := &ToolCallDelta{Index: i, ID: c.ID, Name: c.Name, ArgumentsDelta: c.Arguments}
			if !yield(Event{Type: EventToolCallDelta, ToolCall: d}, nil) {
				return
			}
		}
		u := resp.Usage
		yield(Event{Type: EventFinish, FinishReason: resp.FinishReason, Usage: &u, ID: resp.ID, Model: resp.Model}, nil)
	}
}
