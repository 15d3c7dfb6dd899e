package agent

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/tool"
)

type refuseGate struct{ calls []string }

func (g *refuseGate) Allow(_ context.Context, t tool.Tool, c llm.ToolCall) error {
	g.calls = append(g.calls, t.Name()+" "+c.Arguments)
	return errors.New("an approver said no")
}

// TestGateRefusesToolCall: a refusing Gate keeps the tool from running and
// the model reads why, as an error result.
func TestGateRefusesToolCall(t *testing.T) {
	ran := false
	calc := newTool("calculator", func(context.Context, json.RawMessage) (tool.Result, error) {
		ran = true
		return tool.Result{Content: "42"}, nil
	})
	model := script(t,
		turn{events: events(call(0, "c1", "calculator", `{"expression":"6*7"}`), finish(llm.FinishToolCalls, 5, 2))},
		turn{events: []llm.Event{text("I may not."), finish(llm.FinishStop, 9, 3)}},
	)
	g := &refuseGate{}
	a := &Agent{Model: model, Tools: []tool.Tool{calc}, Gate: g}
	res, err := a.Generate(t.Context(), Input{Messages: []llm.Message{llm.Text(llm.RoleUser, "6*7?")}})
	if err != nil {
		t.Fatal(err)
	}
	if ran {
		t.Error("the tool ran although the gate refused it")
	}
	if len(g.calls) != 1 || g.calls[0] != `calculator {"expression":"6*7"}` {
		t.Errorf("gate saw %q, want the one call", g.calls)
	}
	second := model.requests()[1].Messages
	last := second[len(second)-1]
	if !last.IsError || !strings.Contains(last.Text(), "an approver said no") {
		t.Errorf("model got %+v, want an error result with the refusal", last)
	}
	if res.Message.Text() != "I may not." {
		t.Errorf("answer = %q", res.Message.Text())
	}
}

// TestObserveSeesEveryEnd: Observe's end function runs once per run with
// the run's usage, its error, or context.Canceled when the caller stops
// reading early.
func TestObserveSeesEveryEnd(t *testing.T) {
	var ends []RunEnd
	type ctxKey struct{}
	observe := func(ctx context.Context) (context.Context, func(RunEnd)) {
		return context.WithValue(ctx, ctxKey{}, "seen"), func(e RunEnd) { ends = append(ends, e) }
	}
	boom := &llm.Error{Kind: llm.KindProvider, Message: "upstream down"}
	var sawCtx []any
	model := &fakeModel{t: t, respond: func(n int, req llm.Request) turn {
		switch n {
		case 0:
			return turn{events: []llm.Event{text("hello"), finish(llm.FinishStop, 10, 4)}}
		case 1:
			return turn{err: boom}
		default:
			return turn{events: []llm.Event{text("a"), text("b"), finish(llm.FinishStop, 1, 1)}}
		}
	}}
	a := &Agent{Model: ctxModel{next: model, saw: &sawCtx, key: ctxKey{}}, Observe: observe}
	in := Input{Messages: []llm.Message{llm.Text(llm.RoleUser, "hi")}}
	if _, err := a.Generate(t.Context(), in); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Generate(t.Context(), in); !errors.Is(err, boom) {
		t.Fatalf("second run = %v, want the provider error", err)
	}
	for ev, err := range a.Run(t.Context(), in) {
		if err != nil || ev.Type == EventTextDelta {
			break // the caller stops at the first text
		}
	}
	if len(ends) != 3 {
		t.Fatalf("ends = %+v, want 3", ends)
	}
	if ends[0].Err != nil || ends[0].Usage.InputTokens != 10 || ends[0].Usage.OutputTokens != 4 || ends[0].Steps != 1 {
		t.Errorf("finished run end = %+v", ends[0])
	}
	if !errors.Is(ends[1].Err, boom) {
		t.Errorf("failed run end = %+v, want the provider error", ends[1])
	}
	if !errors.Is(ends[2].Err, context.Canceled) {
		t.Errorf("abandoned run end = %+v, want context.Canceled", ends[2])
	}
	for i, v := range sawCtx {
		if v != "seen" {
			t.Errorf("model call %d did not get Observe's context", i)
		}
	}
}

// ctxModel records a context value each call sees.
type ctxModel struct {
	next llm.Model
	saw  *[]any
	key  any
}

func (m ctxModel) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	*m.saw = append(*m.saw, ctx.Value(m.key))
	return m.next.Generate(ctx, req)
}

func (m ctxModel) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	*m.saw = append(*m.saw, ctx.Value(m.key))
	return m.next.Stream(ctx, req)
}

// TestObserveCountsTheCallsOfAFailedRun: a run that fails after some model
// calls ends with their usage: the tokens were spent (and billed) whether
// or not the run answered. It ended with none once, so a failed run's
// usage row said 0 tokens and a budget never saw them.
func TestObserveCountsTheCallsOfAFailedRun(t *testing.T) {
	var ends []RunEnd
	observe := func(ctx context.Context) (context.Context, func(RunEnd)) {
		return ctx, func(e RunEnd) { ends = append(ends, e) }
	}
	calc := newTool("calculator", func(context.Context, json.RawMessage) (tool.Result, error) {
		return tool.Result{Content: "42"}, nil
	})
	boom := &llm.Error{Kind: llm.KindQuota, Message: "budget spent"}
	model := script(t,
		turn{events: events(call(0, "c1", "calculator", `{"expression":"6*7"}`), finish(llm.FinishToolCalls, 300, 20))},
		turn{events: events(call(0, "c2", "calculator", `{"expression":"6*8"}`), finish(llm.FinishToolCalls, 330, 25))},
		turn{err: boom},
	)
	a := &Agent{Model: model, Tools: []tool.Tool{calc}, Observe: observe}
	if _, err := a.Generate(t.Context(), Input{Messages: []llm.Message{llm.Text(llm.RoleUser, "6*7, then 6*8")}}); !errors.Is(err, boom) {
		t.Fatalf("run = %v, want the third call's error", err)
	}
	if len(ends) != 1 || !errors.Is(ends[0].Err, boom) || ends[0].Usage != (llm.Usage{InputTokens: 630, OutputTokens: 45}) {
		t.Errorf("ends = %+v; want one, failed, with the two calls' 630 in and 45 out", ends)
	}
}
