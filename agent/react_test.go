package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/llm/openai"
	"github.com/agentcraftlab/agentcraft/tool"
)

// reactTools are the tools of the acceptance scenario: lookup_a and
// lookup_b each wait until both have started, so they only succeed when
// the loop runs them concurrently; flaky always fails.
func reactTools(t *testing.T) []tool.Tool {
	var wg sync.WaitGroup
	wg.Add(2)
	both := make(chan struct{})
	go func() { wg.Wait(); close(both) }()
	var once [2]sync.Once
	t.Cleanup(func() {
		// Release the waiting goroutine when a lookup never started.
		once[0].Do(wg.Done)
		once[1].Do(wg.Done)
	})
	lookup := func(i int, name, answer string) tool.Tool {
		return newTool(name, func(ctx context.Context, _ json.RawMessage) (tool.Result, error) {
			once[i].Do(wg.Done)
			select {
			case <-both:
				return tool.Result{Content: answer}, nil
			case <-time.After(5 * time.Second):
				return tool.ErrorResult("%s waited 5s for its sibling: the calls did not run concurrently", name), nil
			}
		})
	}
	flaky := newTool("flaky", func(context.Context, json.RawMessage) (tool.Result, error) {
		return tool.Result{}, errors.New("backend unavailable")
	})
	return []tool.Tool{lookup(0, "lookup_a", "Paris: 18°C"), lookup(1, "lookup_b", "Oslo: 4°C"), flaky}
}

// reactTurns is the three-step plan: two parallel calls, a call of the
// failing tool, then the answer. usage is each step's token count.
func reactTurns(usage int) []llmtest.Turn {
	u := llm.Usage{InputTokens: usage - 10, OutputTokens: 10}
	return []llmtest.Turn{
		{Text: "Looking up both cities.", Usage: u, ToolCalls: []llm.ToolCall{
			{ID: "call_a", Name: "lookup_a", Arguments: `{"city":"Paris"}`},
			{ID: "call_b", Name: "lookup_b", Arguments: `{"city":"Oslo"}`},
		}},
		{Usage: u, ToolCalls: []llm.ToolCall{{ID: "call_f", Name: "flaky", Arguments: `{}`}}},
		{Text: "Paris is 18°C and Oslo 4°C; the forecast service is down.", Usage: u},
	}
}

func fakeOpenAI(t *testing.T, turns ...llmtest.Turn) (*llmtest.Server, llm.Model) {
	srv := llmtest.NewOpenAI(t, turns...)
	m, err := openai.New(&openai.Options{BaseURL: srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	return srv, m
}

// TestReActAgainstFakeLLM is the acceptance scenario of the ReAct loop,
// over the wire against the scripted OpenAI fake.
func TestReActAgainstFakeLLM(t *testing.T) {
	srv, model := fakeOpenAI(t, reactTurns(100)...)
	a := &Agent{Name: "weather", Model: model, ModelID: "fake-model", Tools: reactTools(t)}
	user := llm.Text(llm.RoleUser, "Weather in Paris and Oslo, and the forecast?")
	got, err := collect(a.Run(context.Background(), Input{Messages: []llm.Message{user}}))
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	finished := map[string]*ToolActivity{}
	var started []string
	for _, ev := range got {
		switch ev.Type {
		case EventTextDelta:
			text.WriteString(ev.Text)
		case EventToolStarted:
			started = append(started, fmt.Sprintf("%d:%s", ev.Step, ev.Tool.Name))
		case EventToolFinished:
			finished[ev.Tool.Name] = ev.Tool
		case EventToolCallDelta:
			t.Errorf("a server tool call reached the caller: %+v", ev.ToolCall)
		}
	}
	if want := "1:lookup_a 1:lookup_b 2:flaky"; strings.Join(started, " ") != want {
		t.Errorf("tools started %v, want %s", started, want)
	}
	for name, want := range map[string]string{"lookup_a": "Paris: 18°C", "lookup_b": "Oslo: 4°C"} {
		if f := finished[name]; f == nil || f.IsError || f.Content != want {
			t.Errorf("%s finished with %+v, want %q", name, f, want)
		}
	}
	if f := finished["flaky"]; f == nil || !f.IsError || f.Content != "tool flaky failed: backend unavailable" || f.Duration <= 0 {
		t.Errorf("flaky finished with %+v, want the error and a duration", f)
	}
	if want := "Looking up both cities.\n\nParis is 18°C and Oslo 4°C; the forecast service is down."; text.String() != want {
		t.Errorf("text = %q, want %q", text.String(), want)
	}
	last := got[len(got)-1]
	if last.Type != EventFinish || last.FinishReason != llm.FinishStop || last.Steps != 3 || last.Usage.Total() != 300 {
		t.Errorf("finish = %+v, want stop after 3 steps and 300 tokens", last)
	}

	// What went back to the model: both results in step 2's request, the
	// failure in step 3's.
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model calls, want 3", len(reqs))
	}
	for _, want := range []string{`"tool_call_id":"call_a"`, `Paris: 18°C`, `"tool_call_id":"call_b"`, `Oslo: 4°C`} {
		if !strings.Contains(string(reqs[1].Body), want) {
			t.Errorf("step 2 request lacks %s: %s", want, reqs[1].Body)
		}
	}
	if !strings.Contains(string(reqs[2].Body), "tool flaky failed: backend unavailable") {
		t.Errorf("step 3 request lacks the tool error: %s", reqs[2].Body)
	}
}

// TestReActBudgets: the same plan with a budget too small for it ends
// with a clear message, the text the user sees.
func TestReActBudgets(t *testing.T) {
	tests := []struct {
		name     string
		agent    Agent
		in       Input
		want     string
		steps    int
		toolRuns int // flaky calls
	}{
		{"step budget", Agent{MaxSteps: 2}, Input{},
			"Looking up both cities.\n\nStopped at the step limit (max_steps 2) without a final answer: tools ran in 1 step; the model's last tool call (flaky) was not run.", 2, 0},
		{"token budget", Agent{TokenBudget: 150}, Input{},
			"Looking up both cities.\n\nStopped after using 200 tokens, over this run's budget of 150, without a final answer.", 2, 0},
		{"token budget of the request", Agent{TokenBudget: 10000}, Input{TokenBudget: 100},
			"Looking up both cities.\n\nStopped after using 100 tokens, over this run's budget of 100, without a final answer.", 1, 0},
		{"step budget of the request", Agent{}, Input{MaxSteps: 1},
			"Looking up both cities.\n\nStopped at the step limit (max_steps 1) without a final answer: no tool ran; the model's last 2 tool calls (lookup_a, lookup_b) were not run.", 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, model := fakeOpenAI(t, reactTurns(100)[:tt.steps]...)
			a := tt.agent
			a.Model, a.ModelID = model, "fake-model"
			a.Tools = reactTools(t)
			if tt.steps < 2 {
				// lookup_a and lookup_b never run: nothing waits on them.
				a.Tools = a.Tools[2:]
				a.Tools = append(a.Tools, newTool("lookup_a", nil), newTool("lookup_b", nil))
			}
			res, err := a.Generate(context.Background(), tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if res.Message.Text() != tt.want {
				t.Errorf("text = %q, want %q", res.Message.Text(), tt.want)
			}
			if res.FinishReason != llm.FinishLength || res.Steps != tt.steps {
				t.Errorf("finish %s after %d steps, want length after %d", res.FinishReason, res.Steps, tt.steps)
			}
			last := res.Messages[len(res.Messages)-1]
			note := tt.want[strings.LastIndex(tt.want, "\n\n")+2:]
			if len(last.ToolCalls) != 0 || !strings.HasSuffix(last.Text(), note) {
				t.Errorf("last message %+v: want the note, no unanswered calls", last)
			}
			for _, tl := range a.Tools {
				if tl.Name() == "flaky" && tl.(*funcTool).calls.Load() != 0 {
					t.Errorf("flaky ran after the budget was spent")
				}
			}
		})
	}
}

// TestBudgetNeverCutsAnAnswer: a final answer over the budget is kept.
func TestBudgetNeverCutsAnAnswer(t *testing.T) {
	model := script(t, turn{events: events(text("Done."), finish(llm.FinishStop, 900, 100))})
	res, err := (&Agent{Model: model, TokenBudget: 10}).Generate(context.Background(), Input{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Message.Text() != "Done." || res.FinishReason != llm.FinishStop {
		t.Errorf("result %q %s, want the answer and stop", res.Message.Text(), res.FinishReason)
	}
}

// TestInputCannotRaiseLimits: a request lowers the agent's limits, never
// raises them.
func TestInputCannotRaiseLimits(t *testing.T) {
	loop := &fakeModel{t: t, respond: func(n int, _ llm.Request) turn {
		return turn{events: events(call(0, fmt.Sprintf("c%d", n), "calculator", `{"expression":"1"}`), finish(llm.FinishToolCalls, 10, 10))}
	}}
	a := &Agent{Model: loop, Tools: []tool.Tool{tool.Calculator{}}, MaxSteps: 2, TokenBudget: 50}
	res, err := a.Generate(context.Background(), Input{MaxSteps: 5, TokenBudget: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if res.Steps != 2 || res.FinishReason != llm.FinishLength {
		t.Errorf("%d steps, %s; want the agent's limit of 2", res.Steps, res.FinishReason)
	}
}

func TestToolTimeout(t *testing.T) {
	hang := newTool("hang", func(ctx context.Context, _ json.RawMessage) (tool.Result, error) {
		<-ctx.Done()
		return tool.Result{}, ctx.Err()
	})
	quick := newTool("quick", func(ctx context.Context, _ json.RawMessage) (tool.Result, error) {
		if _, ok := ctx.Deadline(); !ok {
			return tool.ErrorResult("no deadline"), nil
		}
		return tool.Result{Content: "fine"}, nil
	})
	model := script(t,
		turn{events: events(call(0, "h", "hang", `{}`), call(1, "q", "quick", `{}`), finish(llm.FinishToolCalls, 1, 1))},
		turn{events: events(text("ok"), finish(llm.FinishStop, 1, 1))},
	)
	a := &Agent{Model: model, Tools: []tool.Tool{hang, quick}, ToolTimeouts: map[string]time.Duration{"hang": 50 * time.Millisecond}}
	start := time.Now()
	res, err := a.Generate(context.Background(), Input{})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("run took %v with a 50ms tool timeout", took)
	}
	req := model.requests()[1]
	if got := toolResultOf(t, req, "h"); !got.IsError || got.Text() != "tool hang timed out after 50ms: ask for less work in one call, or answer without it" {
		t.Errorf("timed-out call result = %q (error %v)", got.Text(), got.IsError)
	}
	if got := toolResultOf(t, req, "q"); got.IsError || got.Text() != "fine" {
		t.Errorf("quick result = %q: every call has a deadline (the default)", got.Text())
	}
	if res.FinishReason != llm.FinishStop {
		t.Errorf("finish = %s, want the run to recover", res.FinishReason)
	}
}

func TestToolTimeoutSettings(t *testing.T) {
	tests := []struct {
		agent Agent
		want  time.Duration
	}{
		{Agent{}, DefaultToolTimeout},
		{Agent{ToolTimeout: time.Second}, time.Second},
		{Agent{ToolTimeout: -1}, 0},
		{Agent{ToolTimeout: time.Second, ToolTimeouts: map[string]time.Duration{"x": 3 * time.Second}}, 3 * time.Second},
		{Agent{ToolTimeouts: map[string]time.Duration{"x": -1}}, 0},
		{Agent{ToolTimeout: time.Second, ToolTimeouts: map[string]time.Duration{"y": 3 * time.Second}}, time.Second},
	}
	for _, tt := range tests {
		r := &run{a: &tt.agent}
		if got := r.timeout("x"); got != tt.want {
			t.Errorf("timeout with ToolTimeout %v, ToolTimeouts %v = %v, want %v", tt.agent.ToolTimeout, tt.agent.ToolTimeouts, got, tt.want)
		}
	}
}

func TestToolResultTruncated(t *testing.T) {
	tests := []struct {
		name     string
		maxBytes int
		content  string
		want     string
	}{
		{"cut at a character boundary", 10, "123456789é0123", "123456789\n[truncated: 9 of 15 bytes; ask for less]"},
		{"exact fit", 4, "abcd", "abcd"},
		{"default limit", 0, strings.Repeat("x", 20000),
			strings.Repeat("x", DefaultMaxToolResultBytes) + fmt.Sprintf("\n[truncated: %d of 20000 bytes; ask for less]", DefaultMaxToolResultBytes)},
		{"no limit", -1, strings.Repeat("x", 20000), strings.Repeat("x", 20000)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			big := newTool("big", func(context.Context, json.RawMessage) (tool.Result, error) {
				return tool.Result{Content: tt.content}, nil
			})
			model := script(t,
				turn{events: events(call(0, "c", "big", `{}`), finish(llm.FinishToolCalls, 1, 1))},
				turn{events: events(text("ok"), finish(llm.FinishStop, 1, 1))},
			)
			got, err := collect((&Agent{Model: model, Tools: []tool.Tool{big}, MaxToolResultBytes: tt.maxBytes}).Run(context.Background(), Input{}))
			if err != nil {
				t.Fatal(err)
			}
			if res := toolResultOf(t, model.requests()[1], "c"); res.Text() != tt.want {
				t.Errorf("the model got %d bytes ending %q, want %d bytes", len(res.Text()), tail(res.Text()), len(tt.want))
			}
			for _, ev := range got {
				if ev.Type == EventToolFinished && ev.Tool.Content != tt.want {
					t.Errorf("ToolFinished content differs from what the model got")
				}
			}
		})
	}
}

func tail(s string) string { return s[max(0, len(s)-60):] }

// TestArgumentsRepaired: a code fence or trailing comma around otherwise
// good arguments reaches the tool repaired.
func TestArgumentsRepaired(t *testing.T) {
	model := script(t,
		turn{events: events(call(0, "c", "calculator", "```json\n{\"expression\": \"6*7\",}\n```"), finish(llm.FinishToolCalls, 1, 1))},
		turn{events: events(text("42"), finish(llm.FinishStop, 1, 1))},
	)
	if _, err := (&Agent{Model: model, Tools: []tool.Tool{tool.Calculator{}}}).Generate(context.Background(), Input{}); err != nil {
		t.Fatal(err)
	}
	if res := toolResultOf(t, model.requests()[1], "c"); res.IsError || res.Text() != "42" {
		t.Errorf("result = %q (error %v), want 42", res.Text(), res.IsError)
	}
}

// panicLog fails the test when a tool panic is logged.
type panicLog struct {
	slog.Handler
	mu     sync.Mutex
	panics []string
}

func (h *panicLog) Enabled(context.Context, slog.Level) bool { return true }

func (h *panicLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "agent tool panicked" {
		h.mu.Lock()
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "panic" {
				h.panics = append(h.panics, a.Value.String())
			}
			return true
		})
		h.mu.Unlock()
	}
	return nil
}

// FuzzToolArguments feeds arbitrary argument strings through the loop's
// dispatch to the real calculator: no panic (recovered or not), and
// arguments CheckArguments refuses come back as an error result naming
// the tool.
func FuzzToolArguments(f *testing.F) {
	for _, s := range []string{
		``, `null`, `{}`, `[]`, `"x"`, `{`, `{"expression":"1+2"}`, `{"expression":2}`, `{"expr":"1"}`,
		"```json\n{\"expression\": \"2*3\",}\n```", `{"expression":"1/0"}`, `{"expression":"` + strings.Repeat("(", 600) + `"}`,
		`{"expression": 1e400}`, `{"expression":"2**64"}`, "\xff\xfe", `{"expression":"1",}`, `{"a":[1,2,],}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, args string) {
		h := &panicLog{Handler: slog.DiscardHandler}
		a := &Agent{Name: "fuzz", Model: script(t), Tools: []tool.Tool{tool.Calculator{}}, Logger: slog.New(h)}
		r, err := a.start(Input{})
		if err != nil {
			t.Fatal(err)
		}
		out := r.callTool(context.Background(), llm.ToolCall{ID: "c", Name: "calculator", Arguments: args})
		if len(h.panics) > 0 {
			t.Fatalf("calculator panicked on %q: %v", args, h.panics)
		}
		if out.IsError && out.Content == "" {
			t.Fatalf("error result without a message for %q", args)
		}
		if _, _, ok := tool.CheckArguments(tool.Calculator{}.Schema(), json.RawMessage(args)); !ok {
			if !out.IsError || !strings.HasPrefix(out.Content, "invalid arguments for calculator: ") {
				t.Fatalf("arguments %q are malformed but the result is %+v", args, out.Result)
			}
		}
	})
}
