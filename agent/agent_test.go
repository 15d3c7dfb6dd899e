package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.uber.org/goleak"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var ignoreDuration = cmpopts.IgnoreFields(ToolActivity{}, "Duration")

func usage(in, out int) *llm.Usage { return &llm.Usage{InputTokens: in, OutputTokens: out} }

func TestPlainAnswer(t *testing.T) {
	temp := 0.2
	model := script(t, turn{events: events(text("Hel"), text("lo"), finish(llm.FinishStop, 12, 2))})
	a := &Agent{Name: "helper", Model: model, ModelID: "gpt-test", Instructions: "Be brief.",
		Tools: []tool.Tool{tool.Calculator{}}, Temperature: &temp, MaxTokens: 300}
	clientSystem := llm.Text(llm.RoleSystem, "Client system prompt.")
	user := llm.Text(llm.RoleUser, "Hi")
	got, err := collect(a.Run(context.Background(), Input{Messages: []llm.Message{clientSystem, user}, User: "u-1", ToolChoice: "auto"}))
	if err != nil {
		t.Fatal(err)
	}
	want := []Event{
		{Type: EventTextDelta, Step: 1, Text: "Hel"},
		{Type: EventTextDelta, Step: 1, Text: "lo"},
		{Type: EventFinish, Step: 1, FinishReason: llm.FinishStop, Usage: usage(12, 2), Steps: 1,
			Messages: []llm.Message{llm.Text(llm.RoleAssistant, "Hello")}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	wantReq := llm.Request{
		Model:       "gpt-test",
		Messages:    []llm.Message{llm.Text(llm.RoleSystem, "Be brief."), clientSystem, user},
		Tools:       []llm.ToolDef{tool.Def(tool.Calculator{})},
		ToolChoice:  "auto",
		Temperature: &temp,
		MaxTokens:   300,
		User:        "u-1",
	}
	if diff := cmp.Diff([]llm.Request{wantReq}, model.requests()); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
}

func TestNoInstructionsNoTools(t *testing.T) {
	model := script(t, turn{events: events(text("ok"), finish("", 1, 1))})
	a := &Agent{Model: model}
	res, err := a.Generate(context.Background(), Input{Messages: []llm.Message{llm.Text(llm.RoleUser, "x")}})
	if err != nil {
		t.Fatal(err)
	}
	if res.FinishReason != llm.FinishStop || res.Message.Text() != "ok" {
		t.Errorf("result = %+v, want ok/stop", res)
	}
	req := model.requests()[0]
	if len(req.Messages) != 1 || req.Tools != nil {
		t.Errorf("request = %+v, want the user message only and no tools", req)
	}
}

func TestServerToolRoundTrip(t *testing.T) {
	model := script(t,
		turn{events: events(text("Let me compute."),
			call(0, "c1", "calculator", `{"expression":`, ` "6 * 7"}`),
			finish(llm.FinishToolCalls, 100, 20))},
		turn{events: events(text("It is "), text("42."), finish(llm.FinishStop, 130, 5))},
	)
	a := &Agent{Model: model, Tools: []tool.Tool{tool.Calculator{}, tool.CurrentTime{}}}
	user := llm.Text(llm.RoleUser, "What is 6*7?")
	got, err := collect(a.Run(context.Background(), Input{Messages: []llm.Message{user}, ToolChoice: "required"}))
	if err != nil {
		t.Fatal(err)
	}
	callMsg := llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{{Type: llm.PartText, Text: "Let me compute."}},
		ToolCalls: []llm.ToolCall{{ID: "c1", Name: "calculator", Arguments: `{"expression": "6 * 7"}`}}}
	result := llm.ToolResult("c1", "42", false)
	want := []Event{
		{Type: EventTextDelta, Step: 1, Text: "Let me compute."},
		{Type: EventToolStarted, Step: 1, Tool: &ToolActivity{CallID: "c1", Name: "calculator", Arguments: `{"expression": "6 * 7"}`}},
		{Type: EventToolFinished, Step: 1, Tool: &ToolActivity{CallID: "c1", Name: "calculator", Result: "42", Content: "42"}},
		{Type: EventTextDelta, Step: 2, Text: "\n\nIt is "},
		{Type: EventTextDelta, Step: 2, Text: "42."},
		{Type: EventFinish, Step: 2, FinishReason: llm.FinishStop, Usage: usage(230, 25), Steps: 2,
			Messages: []llm.Message{callMsg, result, llm.Text(llm.RoleAssistant, "It is 42.")}},
	}
	if diff := cmp.Diff(want, got, ignoreDuration); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	for _, ev := range got {
		if ev.Type == EventToolCallDelta {
			t.Errorf("server tool call reached the client: %+v", ev)
		}
	}
	reqs := model.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want 2", len(reqs))
	}
	if diff := cmp.Diff([]llm.Message{user, callMsg, result}, reqs[1].Messages); diff != "" {
		t.Errorf("second request's messages (-want +got):\n%s", diff)
	}
	if reqs[0].ToolChoice != "required" || reqs[1].ToolChoice != "" {
		t.Errorf("tool choice = %q then %q, want the client's first, then the default", reqs[0].ToolChoice, reqs[1].ToolChoice)
	}

	res, err := (&Agent{Model: script(t, model.respond(0, llm.Request{}), model.respond(1, llm.Request{})), Tools: a.Tools}).
		Generate(context.Background(), Input{Messages: []llm.Message{user}})
	if err != nil {
		t.Fatal(err)
	}
	wantRes := Result{Message: llm.Text(llm.RoleAssistant, "Let me compute.\n\nIt is 42."), FinishReason: llm.FinishStop,
		Usage: *usage(230, 25), Steps: 2, Messages: want[5].Messages}
	if diff := cmp.Diff(wantRes, res); diff != "" {
		t.Errorf("Generate (-want +got):\n%s", diff)
	}
}

func TestParallelServerTools(t *testing.T) {
	// Each tool waits until both have started: run one after the other,
	// they would time out. "slow" also waits until the consumer has seen
	// "fast" finish, so the results arrive out of call order.
	started := make(chan string, 2)
	bothStarted := make(chan struct{})
	fastReported := make(chan struct{})
	go func() { <-started; <-started; close(bothStarted) }()
	barrier := func(ctx context.Context) error {
		select {
		case <-bothStarted:
			return nil
		case <-time.After(5 * time.Second):
			return errors.New("the other tool never started: tools do not run concurrently")
		}
	}
	slow := newTool("slow", func(ctx context.Context, _ json.RawMessage) (tool.Result, error) {
		started <- "slow"
		if err := barrier(ctx); err != nil {
			return tool.Result{}, err
		}
		select {
		case <-fastReported:
		case <-time.After(5 * time.Second):
		}
		return tool.Result{Content: "slow result"}, nil
	})
	fast := newTool("fast", func(ctx context.Context, _ json.RawMessage) (tool.Result, error) {
		started <- "fast"
		if err := barrier(ctx); err != nil {
			return tool.Result{}, err
		}
		return tool.Result{Content: "fast result"}, nil
	})
	model := script(t,
		turn{events: events(call(0, "a", "slow", "{}"), call(1, "b", "fast", "{}"), finish(llm.FinishToolCalls, 1, 1))},
		turn{events: events(text("done"), finish(llm.FinishStop, 1, 1))},
	)
	a := &Agent{Model: model, Tools: []tool.Tool{slow, fast}}
	var got []Event
	for ev, err := range a.Run(context.Background(), Input{}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev)
		if ev.Type == EventToolFinished && ev.Tool.Name == "fast" {
			close(fastReported)
		}
	}
	var finished []string
	for _, ev := range got {
		if ev.Type == EventToolFinished {
			if ev.Tool.IsError {
				t.Errorf("%s failed: %s", ev.Tool.Name, ev.Tool.Result)
			}
			finished = append(finished, ev.Tool.Name)
		}
	}
	if diff := cmp.Diff([]string{"fast", "slow"}, finished); diff != "" {
		t.Errorf("finish order (-want +got):\n%s", diff)
	}
	msgs := model.requests()[1].Messages
	want := []llm.Message{llm.ToolResult("a", "slow result", false), llm.ToolResult("b", "fast result", false)}
	if diff := cmp.Diff(want, msgs[len(msgs)-2:]); diff != "" {
		t.Errorf("tool results are not in call order (-want +got):\n%s", diff)
	}
}

func TestClientToolPassthrough(t *testing.T) {
	weather := llm.ToolDef{Name: "get_weather", Parameters: json.RawMessage(`{"type":"object"}`)}
	news := llm.ToolDef{Name: "get_news"}
	// Upstream indices 1 and 3 are client calls; 0 and 2 are server calls.
	// The second client call gets its name only on its second fragment.
	model := script(t, turn{events: events(
		text("Checking."),
		call(0, "s1", "calculator", `{"expression":"1+1"}`),
		call(1, "w1", "get_weather", `{"city":`),
		llm.Event{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: 3, ID: "n1", ArgumentsDelta: `{"topic"`}},
		call(2, "s2", "current_time", `{}`),
		llm.Event{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: 3, Name: "get_news", ArgumentsDelta: `:"go"`}},
		llm.Event{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: 1, ArgumentsDelta: `"Paris"}`}},
		llm.Event{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: 3, ArgumentsDelta: `}`}},
		finish(llm.FinishToolCalls, 50, 30),
	)})
	calc := newTool("calculator", func(context.Context, json.RawMessage) (tool.Result, error) { return tool.Result{Content: "2"}, nil })
	clock := newTool("current_time", func(context.Context, json.RawMessage) (tool.Result, error) { return tool.Result{Content: "now"}, nil })
	a := &Agent{Model: model, Tools: []tool.Tool{calc, clock}}
	in := Input{Messages: []llm.Message{llm.Text(llm.RoleUser, "weather and news")}, ClientTools: []llm.ToolDef{weather, news}}
	got, err := collect(a.Run(context.Background(), in))
	if err != nil {
		t.Fatal(err)
	}
	clientCalls := []llm.ToolCall{
		{ID: "w1", Name: "get_weather", Arguments: `{"city":"Paris"}`},
		{ID: "n1", Name: "get_news", Arguments: `{"topic":"go"}`},
	}
	want := []Event{
		{Type: EventTextDelta, Step: 1, Text: "Checking."},
		{Type: EventToolCallDelta, Step: 1, ToolCall: &llm.ToolCallDelta{Index: 0, ID: "w1", Name: "get_weather"}},
		{Type: EventToolCallDelta, Step: 1, ToolCall: &llm.ToolCallDelta{Index: 0, ArgumentsDelta: `{"city":`}},
		{Type: EventToolCallDelta, Step: 1, ToolCall: &llm.ToolCallDelta{Index: 1, ID: "n1", Name: "get_news", ArgumentsDelta: `{"topic":"go"`}},
		{Type: EventToolCallDelta, Step: 1, ToolCall: &llm.ToolCallDelta{Index: 0, ArgumentsDelta: `"Paris"}`}},
		{Type: EventToolCallDelta, Step: 1, ToolCall: &llm.ToolCallDelta{Index: 1, ArgumentsDelta: `}`}},
		{Type: EventFinish, Step: 1, FinishReason: llm.FinishToolCalls, Usage: usage(50, 30), Steps: 1,
			Messages: []llm.Message{{Role: llm.RoleAssistant, Content: []llm.Part{{Type: llm.PartText, Text: "Checking."}}, ToolCalls: clientCalls}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if n := calc.calls.Load() + clock.calls.Load(); n != 0 {
		t.Errorf("server tools ran %d times in a turn that ends with client calls", n)
	}
	if tools := model.requests()[0].Tools; len(tools) != 4 || tools[2].Name != "get_weather" || tools[3].Name != "get_news" {
		t.Errorf("request tools = %+v, want the agent's then the client's", tools)
	}

	// Generate returns the client calls as the assistant message's calls.
	res, err := (&Agent{Model: script(t, model.respond(0, llm.Request{})), Tools: a.Tools}).Generate(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(clientCalls, res.Message.ToolCalls); diff != "" || res.FinishReason != llm.FinishToolCalls {
		t.Errorf("Generate: finish %q, calls (-want +got):\n%s", res.FinishReason, diff)
	}
}

func TestClientToolWithoutID(t *testing.T) {
	model := script(t, turn{events: events(call(0, "", "ask_user", `{}`), finish(llm.FinishToolCalls, 1, 1))})
	res, err := (&Agent{Model: model}).Generate(context.Background(), Input{ClientTools: []llm.ToolDef{{Name: "ask_user"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Message.ToolCalls) != 1 || res.Message.ToolCalls[0].ID == "" {
		t.Errorf("calls = %+v, want a generated id the client can answer", res.Message.ToolCalls)
	}
}

func TestClientToolRejected(t *testing.T) {
	a := &Agent{Name: "calc", Model: script(t), Tools: []tool.Tool{tool.Calculator{}}}
	for name, tools := range map[string][]llm.ToolDef{
		"clash":     {{Name: "calculator"}},
		"duplicate": {{Name: "x"}, {Name: "x"}},
		"bad name":  {{Name: "has space"}},
	} {
		_, err := collect(a.Run(context.Background(), Input{ClientTools: tools}))
		if llm.KindOf(err) != llm.KindCaller {
			t.Errorf("%s: error %v, want a caller error", name, err)
		}
	}
}

// toolResultOf returns the content of the tool message answering id in req.
func toolResultOf(t *testing.T, req llm.Request, id string) llm.Message {
	t.Helper()
	for _, m := range req.Messages {
		if m.Role == llm.RoleTool && m.ToolCallID == id {
			return m
		}
	}
	t.Fatalf("no tool result for %s in %+v", id, req.Messages)
	return llm.Message{}
}

func TestToolFailuresBecomeResults(t *testing.T) {
	var logBuf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logBuf, nil))
	panicky := newTool("panicky", func(context.Context, json.RawMessage) (tool.Result, error) { panic("nil map write") })
	broken := newTool("broken", func(context.Context, json.RawMessage) (tool.Result, error) {
		return tool.Result{}, errors.New("mcp session lost")
	})
	tests := []struct {
		name, call, args string
		want             string
	}{
		{"unknown tool", "web_search", `{}`, `unknown tool "web_search"; available: calculator, panicky, broken`},
		{"bad JSON", "calculator", `{"expression": `, "invalid arguments for calculator: arguments are not valid JSON"},
		{"not an object", "calculator", `["1+1"]`, "invalid arguments for calculator: arguments must be a JSON object"},
		{"schema mismatch", "calculator", `{"expr": "1+1"}`, `invalid arguments for calculator: missing required argument "expression"`},
		{"wrong type", "calculator", `{"expression": 2}`, `"expression" must be string, not number`},
		{"panic", "panicky", `{}`, "tool panicky failed with an internal error"},
		{"go error", "broken", `{}`, "tool broken failed: mcp session lost"},
		{"tool error result", "calculator", `{"expression":"1/0"}`, "division by zero"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := script(t,
				turn{events: events(call(0, "c1", tt.call, tt.args), finish(llm.FinishToolCalls, 1, 1))},
				turn{events: events(text("recovered"), finish(llm.FinishStop, 1, 1))},
			)
			a := &Agent{Model: model, Tools: []tool.Tool{tool.Calculator{}, panicky, broken}, Logger: logger}
			got, err := collect(a.Run(context.Background(), Input{}))
			if err != nil {
				t.Fatal(err)
			}
			res := toolResultOf(t, model.requests()[1], "c1")
			if !res.IsError || !strings.Contains(res.Text(), tt.want) {
				t.Errorf("tool result = %q (error %v), want an error containing %q", res.Text(), res.IsError, tt.want)
			}
			var fin *ToolActivity
			for _, ev := range got {
				if ev.Type == EventToolFinished {
					fin = ev.Tool
				}
			}
			if fin == nil || !fin.IsError || fin.Name != tt.call {
				t.Errorf("ToolFinished = %+v, want an error for %s", fin, tt.call)
			}
			if last := got[len(got)-1]; last.Type != EventFinish || last.FinishReason != llm.FinishStop {
				t.Errorf("run did not recover: last event %+v", last)
			}
		})
	}
	if !strings.Contains(logBuf.String(), `"msg":"agent tool panicked"`) || !strings.Contains(logBuf.String(), "nil map write") {
		t.Errorf("panic was not logged with its value:\n%s", logBuf.String())
	}
}

func TestStepLimit(t *testing.T) {
	loop := &fakeModel{t: t, respond: func(n int, _ llm.Request) turn {
		return turn{events: events(call(0, fmt.Sprintf("c%d", n), "calculator", `{"expression":"1+1"}`), finish(llm.FinishToolCalls, 10, 1))}
	}}
	calc := newTool("calculator", func(context.Context, json.RawMessage) (tool.Result, error) { return tool.Result{Content: "2"}, nil })
	a := &Agent{Model: loop, Tools: []tool.Tool{calc}, MaxSteps: 3}
	res, err := a.Generate(context.Background(), Input{Messages: []llm.Message{llm.Text(llm.RoleUser, "loop")}})
	if err != nil {
		t.Fatal(err)
	}
	if res.FinishReason != llm.FinishLength || res.Steps != 3 || res.Message.Text() != "Stopped at the step limit (max_steps 3) without a final answer: tools ran in 2 steps; the model's last tool call (calculator) was not run." {
		t.Errorf("result = %q, %s, %d steps; want the stop note, length, 3 steps", res.Message.Text(), res.FinishReason, res.Steps)
	}
	if n := len(loop.requests()); n != 3 {
		t.Errorf("%d model calls, want 3", n)
	}
	if n := calc.calls.Load(); n != 2 {
		t.Errorf("tool ran %d times, want 2: the last step's calls have no model call to read them", n)
	}
	if res.Usage != (llm.Usage{InputTokens: 30, OutputTokens: 3}) {
		t.Errorf("usage = %+v, want the sum of 3 steps", res.Usage)
	}
	last := res.Messages[len(res.Messages)-1]
	if len(last.ToolCalls) != 0 || last.Text() != "Stopped at the step limit (max_steps 3) without a final answer: tools ran in 2 steps; the model's last tool call (calculator) was not run." {
		t.Errorf("last message %+v: want the note without unanswered calls", last)
	}
	if len(res.Messages) != 5 { // 2 × (call + result) + note
		t.Errorf("%d messages added, want 5", len(res.Messages))
	}

	// Default limit.
	loop.reqs = nil
	res, err = (&Agent{Model: loop, Tools: []tool.Tool{calc}}).Generate(context.Background(), Input{})
	if err != nil || res.Steps != DefaultMaxSteps {
		t.Errorf("default limit: %d steps, %v; want %d", res.Steps, err, DefaultMaxSteps)
	}
}

func TestStepLimitNoteAfterText(t *testing.T) {
	model := script(t, turn{events: events(text("Trying once more"), call(0, "c", "calculator", `{"expression":"1"}`), finish(llm.FinishToolCalls, 1, 1))})
	res, err := (&Agent{Model: model, Tools: []tool.Tool{tool.Calculator{}}, MaxSteps: 1}).Generate(context.Background(), Input{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "Trying once more\n\nStopped at the step limit (max_steps 1) without a final answer: no tool ran; the model's last tool call (calculator) was not run."; res.Message.Text() != want {
		t.Errorf("text = %q, want %q", res.Message.Text(), want)
	}
}

func TestCancelDuringTool(t *testing.T) {
	started := make(chan struct{})
	blocking := newTool("wait", func(ctx context.Context, _ json.RawMessage) (tool.Result, error) {
		close(started)
		<-ctx.Done()
		return tool.ErrorResult("cancelled: %v", ctx.Err()), nil
	})
	model := script(t, turn{events: events(call(0, "c1", "wait", `{}`), finish(llm.FinishToolCalls, 1, 1))})
	a := &Agent{Model: model, Tools: []tool.Tool{blocking}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-started; cancel() }()
	start := time.Now()
	_, err := collect(a.Run(ctx, Input{}))
	if !errors.Is(err, context.Canceled) || llm.KindOf(err) != llm.KindCanceled {
		t.Errorf("error = %v, want context.Canceled", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("run took %v after cancel", took)
	}
	if n := len(model.requests()); n != 1 {
		t.Errorf("%d model calls after cancel, want 1", n)
	}
}

func TestConsumerStopsDuringTools(t *testing.T) {
	defer goleak.VerifyNone(t)
	toolDone := make(chan error, 1)
	blocking := newTool("wait", func(ctx context.Context, _ json.RawMessage) (tool.Result, error) {
		select {
		case <-ctx.Done():
			toolDone <- ctx.Err()
		case <-time.After(5 * time.Second):
			toolDone <- errors.New("tool was not cancelled")
		}
		return tool.Result{Content: "late"}, nil
	})
	fast := newTool("fast", func(context.Context, json.RawMessage) (tool.Result, error) { return tool.Result{Content: "ok"}, nil })
	model := script(t, turn{events: events(call(0, "a", "wait", `{}`), call(1, "b", "fast", `{}`), finish(llm.FinishToolCalls, 1, 1))})
	a := &Agent{Model: model, Tools: []tool.Tool{blocking, fast}}
	for ev, err := range a.Run(context.Background(), Input{}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == EventToolFinished {
			break // "fast" finished; "wait" still runs
		}
	}
	// Run returned only after its tools did.
	select {
	case err := <-toolDone:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("tool ended with %v, want its ctx cancelled", err)
		}
	default:
		t.Error("Run returned while a tool was still running")
	}
}

func TestModelErrors(t *testing.T) {
	overloaded := &llm.Error{Kind: llm.KindProvider, Provider: "anthropic", Status: 529, Message: "overloaded"}
	t.Run("mid stream", func(t *testing.T) {
		model := script(t, turn{events: events(text("Par")), err: overloaded})
		got, err := collect((&Agent{Model: model}).Run(context.Background(), Input{}))
		if err != overloaded {
			t.Errorf("error = %v, want the model's *llm.Error unchanged", err)
		}
		if len(got) != 1 || got[0].Text != "Par" {
			t.Errorf("events before the error = %+v", got)
		}
	})
	t.Run("after a tool step", func(t *testing.T) {
		model := script(t,
			turn{events: events(call(0, "c", "calculator", `{"expression":"2"}`), finish(llm.FinishToolCalls, 1, 1))},
			turn{err: overloaded},
		)
		res, err := (&Agent{Model: model, Tools: []tool.Tool{tool.Calculator{}}}).Generate(context.Background(), Input{})
		var le *llm.Error
		if !errors.As(err, &le) || le.Status != 529 {
			t.Errorf("error = %v, want the 529", err)
		}
		_ = res
	})
	t.Run("no finish event", func(t *testing.T) {
		model := script(t, turn{events: events(text("cut"))})
		_, err := collect((&Agent{Model: model}).Run(context.Background(), Input{}))
		if !errors.Is(err, llm.ErrIncompleteStream) || llm.KindOf(err) != llm.KindProvider {
			t.Errorf("error = %v, want an incomplete stream provider error", err)
		}
	})
}

func TestUsageSummed(t *testing.T) {
	u := func(in, out, cached int) llm.Event {
		return llm.Event{Type: llm.EventFinish, FinishReason: llm.FinishToolCalls, Usage: &llm.Usage{InputTokens: in, OutputTokens: out, CachedTokens: cached}}
	}
	model := script(t,
		turn{events: events(call(0, "a", "calculator", `{"expression":"1"}`), u(100, 10, 0))},
		turn{events: events(call(0, "b", "calculator", `{"expression":"2"}`), u(150, 12, 100))},
		turn{events: events(text("3"), llm.Event{Type: llm.EventFinish, FinishReason: llm.FinishStop})}, // no usage reported
	)
	res, err := (&Agent{Model: model, Tools: []tool.Tool{tool.Calculator{}}}).Generate(context.Background(), Input{})
	if err != nil {
		t.Fatal(err)
	}
	if want := (llm.Usage{InputTokens: 250, OutputTokens: 22, CachedTokens: 100}); res.Usage != want || res.Steps != 3 {
		t.Errorf("usage %+v over %d steps, want %+v over 3", res.Usage, res.Steps, want)
	}
}

func TestProgressTruncated(t *testing.T) {
	big := strings.Repeat("x", 3*ProgressLen)
	bigTool := newTool("big", func(context.Context, json.RawMessage) (tool.Result, error) { return tool.Result{Content: big}, nil })
	model := script(t,
		turn{events: events(call(0, "c", "big", `{}`), finish(llm.FinishToolCalls, 1, 1))},
		turn{events: events(text("ok"), finish(llm.FinishStop, 1, 1))},
	)
	got, err := collect((&Agent{Model: model, Tools: []tool.Tool{bigTool}}).Run(context.Background(), Input{}))
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range got {
		if ev.Type == EventToolFinished && len([]rune(ev.Tool.Result)) != ProgressLen {
			t.Errorf("progress result has %d characters, want %d", len([]rune(ev.Tool.Result)), ProgressLen)
		}
	}
	if res := toolResultOf(t, model.requests()[1], "c"); res.Text() != big {
		t.Errorf("the model got %d characters, want the whole result", len(res.Text()))
	}
}

func TestValidate(t *testing.T) {
	m := script(t)
	tests := map[string]*Agent{
		"no model":  {Name: "a"},
		"nil tool":  {Model: m, Tools: []tool.Tool{nil}},
		"duplicate": {Model: m, Tools: []tool.Tool{tool.Calculator{}, tool.Calculator{}}},
	}
	for name, a := range tests {
		if err := a.Validate(); err == nil {
			t.Errorf("%s: Validate accepted it", name)
		}
		if _, err := collect(a.Run(context.Background(), Input{})); err == nil {
			t.Errorf("%s: Run accepted it", name)
		}
	}
	if err := (&Agent{Model: m, Tools: []tool.Tool{tool.Calculator{}}}).Validate(); err != nil {
		t.Errorf("valid agent: %v", err)
	}
}

func TestJoinText(t *testing.T) {
	for _, tt := range []struct{ a, b, want string }{
		{"", "b", "b"}, {"a", "", "a"}, {"a", "b", "a\n\nb"}, {"a\n", "b", "a\n\nb"}, {"a\n\n", "b", "a\n\nb"},
	} {
		if got := joinText(tt.a, tt.b); got != tt.want {
			t.Errorf("joinText(%q, %q) = %q, want %q", tt.a, tt.b, got, tt.want)
		}
	}
}

// BenchmarkToolLoop runs a two-step exchange (one calculator call, then
// the answer) against an in-memory model.
func BenchmarkToolLoop(b *testing.B) {
	model := &fakeModel{t: b, respond: func(_ int, req llm.Request) turn {
		if last := req.Messages[len(req.Messages)-1]; last.Role == llm.RoleTool {
			return turn{events: events(text("The answer is "), text(last.Text()), finish(llm.FinishStop, 40, 6))}
		}
		return turn{events: events(text("Computing."), call(0, "c1", "calculator", `{"expression":`, `"6*7"}`), finish(llm.FinishToolCalls, 30, 12))}
	}}
	a := &Agent{Model: model, Instructions: "Use tools.", Tools: []tool.Tool{tool.Calculator{}, tool.CurrentTime{}}}
	in := Input{Messages: []llm.Message{llm.Text(llm.RoleUser, "What is 6*7?")}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		model.reqs = model.reqs[:0]
		res, err := a.Generate(ctx, in)
		if err != nil || res.Steps != 2 {
			b.Fatalf("steps %d, %v", res.Steps, err)
		}
	}
}

// TestBufferedUsesGenerate: a caller that collects the answer gets the same
// run, asked of the model with Generate at every step.
func TestBufferedUsesGenerate(t *testing.T) {
	model := script(t,
		turn{events: events(text("Let me "), text("compute."), call(0, "c1", "calculator", `{"expression":`, ` "6 * 7"}`), finish(llm.FinishToolCalls, 100, 20))},
		turn{events: events(text("It is "), text("42."), finish(llm.FinishStop, 130, 5))},
	)
	a := &Agent{Model: model, Tools: []tool.Tool{tool.Calculator{}}}
	got, err := collect(a.Run(context.Background(), Input{Messages: []llm.Message{llm.Text(llm.RoleUser, "6*7?")}, Buffered: true}))
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, ev := range got {
		if ev.Type == EventTextDelta {
			texts = append(texts, ev.Text)
		}
	}
	if diff := cmp.Diff([]string{"Let me compute.", "\n\nIt is 42."}, texts); diff != "" {
		t.Errorf("text deltas (-want +got):\n%s", diff)
	}
	last := got[len(got)-1]
	if last.Type != EventFinish || last.FinishReason != llm.FinishStop || last.Steps != 2 || *last.Usage != *usage(230, 25) {
		t.Errorf("finish = %+v", last)
	}
	model.mu.Lock()
	defer model.mu.Unlock()
	if model.generates != 2 {
		t.Errorf("%d of 2 steps used Generate", model.generates)
	}
}
