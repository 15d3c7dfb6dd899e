package agent

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/tool"
)

type gateOnly struct{ refuse string }

func (g gateOnly) Allow(_ context.Context, t tool.Tool, _ llm.ToolCall) error {
	if t.Name() == g.refuse {
		return errors.New("no")
	}
	return nil
}

// TestToolCallsOutcomes: Agent.ToolCalls hears of every call with how it
// ended, and a tool name the model invented arrives as ToolUnknownName.
func TestToolCallsOutcomes(t *testing.T) {
	ok := newTool("ok", func(context.Context, json.RawMessage) (tool.Result, error) { return tool.Result{Content: "fine"}, nil })
	errResult := newTool("err_result", func(context.Context, json.RawMessage) (tool.Result, error) {
		return tool.ErrorResult("not found"), nil
	})
	goErr := newTool("go_error", func(context.Context, json.RawMessage) (tool.Result, error) { return tool.Result{}, errors.New("boom") })
	slow := newTool("slow", func(ctx context.Context, _ json.RawMessage) (tool.Result, error) {
		<-ctx.Done()
		return tool.Result{}, ctx.Err()
	})
	panics := newTool("panics", func(context.Context, json.RawMessage) (tool.Result, error) { panic("bug") })
	guarded := newTool("guarded", func(context.Context, json.RawMessage) (tool.Result, error) { return tool.Result{Content: "ran"}, nil })
	model := script(t,
		turn{events: events(
			call(0, "c0", "ok", `{}`), call(1, "c1", "err_result", `{}`), call(2, "c2", "go_error", `{}`),
			call(3, "c3", "slow", `{}`), call(4, "c4", "panics", `{}`), call(5, "c5", "guarded", `{}`),
			call(6, "c6", "made_up_tool_7f3a", `{}`), call(7, "c7", "ok", `[1]`),
			finish(llm.FinishToolCalls, 5, 2))},
		turn{events: []llm.Event{text("done"), finish(llm.FinishStop, 9, 3)}},
	)
	var mu sync.Mutex
	var got []string
	a := &Agent{Model: model, Tools: []tool.Tool{ok, errResult, goErr, slow, panics, guarded}, Gate: gateOnly{refuse: "guarded"},
		ToolTimeouts: map[string]time.Duration{"slow": 20 * time.Millisecond},
		ToolCalls: func(name string, outcome ToolOutcome, d time.Duration) {
			if d < 0 {
				t.Errorf("%s: negative duration", name)
			}
			mu.Lock()
			got = append(got, name+" "+outcome)
			mu.Unlock()
		}}
	if _, err := a.Generate(t.Context(), Input{Messages: []llm.Message{llm.Text(llm.RoleUser, "go")}}); err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	want := []string{"err_result error", "go_error error", "guarded refused", "ok invalid_arguments", "ok ok", "panics panic", "slow timeout", "unknown unknown_tool"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tool calls (-want +got):\n%s", diff)
	}
}
