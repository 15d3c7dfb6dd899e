package llm

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCollectInterleavedToolCalls(t *testing.T) {
	events := []Event{
		{Type: EventTextDelta, Text: "Let me "},
		{Type: EventToolCallDelta, ToolCall: &ToolCallDelta{Index: 0, ID: "a", Name: "calc"}},
		{Type: EventToolCallDelta, ToolCall: &ToolCallDelta{Index: 1, ID: "b", Name: "time"}},
		{Type: EventToolCallDelta, ToolCall: &ToolCallDelta{Index: 0, ArgumentsDelta: `{"x":`}},
		{Type: EventToolCallDelta, ToolCall: &ToolCallDelta{Index: 2, ID: "c", Name: "calc"}},
		{Type: EventToolCallDelta, ToolCall: &ToolCallDelta{Index: 1, ArgumentsDelta: `{}`}},
		{Type: EventToolCallDelta, ToolCall: &ToolCallDelta{Index: 0, ArgumentsDelta: `1}`}},
		{Type: EventTextDelta, Text: "check."},
		{Type: EventFinish, FinishReason: FinishToolCalls, Usage: &Usage{InputTokens: 3, OutputTokens: 4, CachedTokens: 1}, ID: "r1", Model: "m"},
	}
	resp, err := Collect(func(yield func(Event, error) bool) {
		for _, ev := range events {
			if !yield(ev, nil) {
				return
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Response{
		ID: "r1", Model: "m", FinishReason: FinishToolCalls, Usage: Usage{InputTokens: 3, OutputTokens: 4, CachedTokens: 1},
		Message: Message{Role: RoleAssistant, Content: []Part{{Type: PartText, Text: "Let me check."}}, ToolCalls: []ToolCall{
			{ID: "a", Name: "calc", Arguments: `{"x":1}`}, {ID: "b", Name: "time", Arguments: `{}`}, {ID: "c", Name: "calc"},
		}},
	}
	if diff := cmp.Diff(want, resp); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestCollectWithoutFinishIsIncomplete(t *testing.T) {
	_, err := Collect(func(yield func(Event, error) bool) {
		yield(Event{Type: EventTextDelta, Text: "cut"}, nil)
	})
	if KindOf(err) != KindProvider {
		t.Fatalf("err = %v, want a provider error", err)
	}
}

func TestChainOrder(t *testing.T) {
	var order []string
	mw := func(name string) Middleware {
		return func(next Model) Model {
			order = append(order, name)
			return next
		}
	}
	Chain(nil, mw("a"), mw("b"), nil, mw("c"))
	// Chain wraps innermost first, so a is applied last and is outermost.
	if diff := cmp.Diff([]string{"c", "b", "a"}, order); diff != "" {
		t.Errorf("wrap order (-want +got):\n%s", diff)
	}
}

func TestEventsRoundTrip(t *testing.T) {
	want := Response{
		ID: "r", Model: "m", FinishReason: FinishToolCalls, Usage: Usage{InputTokens: 1, OutputTokens: 2},
		Message: Message{Role: RoleAssistant, Content: []Part{{Type: PartText, Text: "hi"}}, ToolCalls: []ToolCall{
			{ID: "a", Name: "f", Arguments: `{"x":1}`}, {ID: "b", Name: "g", Arguments: `{}`},
		}},
	}
	got, err := Collect(Events(want))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Collect(Events(r)) != r (-want +got):\n%s", diff)
	}
}
