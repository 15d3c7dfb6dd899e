package react

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"runtime"
	"testing"

	"github.com/agentcraftlab/agentcraft/agent"
	"github.com/agentcraftlab/agentcraft/autonomous"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/tool"
)

// The transcript, word for word js/bench.mjs's: steps turns that each say
// a thought and call lookup once, then the answer.
const (
	toolName   = "lookup"
	toolResult = "42"
	thought    = "I will look it up."
	answer     = "The answer is 42."
	goal       = "Look the answer up, then answer."
	modelID    = "scripted"
)

// stepCounts are the transcript lengths benchmarked, on both sides.
var stepCounts = []int{1, 5, 20}

// scriptedModel answers from the transcript. It reads its place from the
// request (one tool result per step done), not from a counter, so one
// value serves every run; and the whole script is built beforehand, so the
// fake allocates nothing in Generate: what the benchmarks measure is the
// loop around it.
type scriptedModel struct {
	turns []llm.Response // turns[i] answers a request holding i tool results
}

func newScriptedModel(steps int) *scriptedModel {
	m := &scriptedModel{}
	usage := llm.Usage{InputTokens: 20, OutputTokens: 10}
	for i := range steps {
		m.turns = append(m.turns, llm.Response{
			Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{{Type: llm.PartText, Text: thought}},
				ToolCalls: []llm.ToolCall{{ID: fmt.Sprintf("call_%d", i+1), Name: toolName, Arguments: fmt.Sprintf(`{"query":"step %d"}`, i+1)}}},
			FinishReason: llm.FinishToolCalls, Usage: usage,
		})
	}
	m.turns = append(m.turns, llm.Response{Message: llm.Text(llm.RoleAssistant, answer), FinishReason: llm.FinishStop, Usage: usage})
	return m
}

func (m *scriptedModel) turn(req llm.Request) (llm.Response, error) {
	done := 0
	for _, msg := range req.Messages {
		if msg.Role == llm.RoleTool {
			done++
		}
	}
	if done >= len(m.turns) {
		return llm.Response{}, fmt.Errorf("scripted: request with %d tool results, the script has %d steps", done, len(m.turns)-1)
	}
	return m.turns[done], nil
}

func (m *scriptedModel) Generate(_ context.Context, req llm.Request) (llm.Response, error) {
	return m.turn(req)
}

func (m *scriptedModel) Stream(_ context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	resp, err := m.turn(req)
	if err != nil {
		return func(yield func(llm.Event, error) bool) { yield(llm.Event{}, err) }
	}
	return llm.Events(resp)
}

// lookupTool is a low-capability tool that returns a constant: no call
// parks for an approval, and its own cost is nil.
type lookupTool struct{}

var lookupSchema = json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"],"additionalProperties":false}`)

func (lookupTool) Name() string                { return toolName }
func (lookupTool) Description() string         { return "Looks a fact up." }
func (lookupTool) Schema() json.RawMessage     { return lookupSchema }
func (lookupTool) Capability() tool.Capability { return tool.CapabilityLow }
func (lookupTool) Call(context.Context, json.RawMessage) (tool.Result, error) {
	return tool.Result{Content: toolResult}, nil
}

func newAgent(steps int) *agent.Agent {
	// MaxSteps counts model calls: the steps and the answer.
	return &agent.Agent{Name: "bench", Model: newScriptedModel(steps), ModelID: modelID, Tools: []tool.Tool{lookupTool{}}, MaxSteps: steps + 1}
}

func newExecutor(tb testing.TB, steps int) *autonomous.Executor {
	tb.Helper()
	x, err := autonomous.New(autonomous.Config{
		Agent:        newAgent(steps),
		Limits:       autonomous.Limits{MaxSteps: steps + 1},
		NoReflection: true, // no tool fails; this only keeps a planner call impossible
		ApproveFrom:  -1,   // no approvals (lookup is low anyway)
	})
	if err != nil {
		tb.Fatal(err)
	}
	return x
}

// runAutonomous runs the executor once and checks it went through the
// whole transcript.
func runAutonomous(ctx context.Context, x *autonomous.Executor, steps int) error {
	out, err := x.Run(ctx, goal)
	switch {
	case err != nil:
		return err
	case out.Status != autonomous.StatusDone || out.Answer != answer || out.Steps != steps+1:
		return fmt.Errorf("autonomous: status %s, answer %q, %d steps; want done, %q, %d", out.Status, out.Answer, out.Steps, answer, steps+1)
	}
	return nil
}

// runAgent runs the plain tool loop once (buffered: the model's Generate;
// else its Stream) and checks it went through the whole transcript.
func runAgent(ctx context.Context, a *agent.Agent, steps int, buffered bool) error {
	res, err := a.Generate(ctx, agent.Input{Messages: []llm.Message{llm.Text(llm.RoleUser, goal)}, Buffered: buffered})
	switch {
	case err != nil:
		return err
	case res.Steps != steps+1 || len(res.Messages) != 2*steps+1 || res.Messages[len(res.Messages)-1].Text() != answer:
		return fmt.Errorf("agent: %d steps, %d messages; want %d, %d ending in %q", res.Steps, len(res.Messages), steps+1, 2*steps+1, answer)
	}
	for i := 0; i < steps; i++ {
		if m := res.Messages[2*i+1]; m.Role != llm.RoleTool || m.Text() != toolResult {
			return fmt.Errorf("agent: message %d is %s %q, want the tool result %q", 2*i+1, m.Role, m.Text(), toolResult)
		}
	}
	return nil
}

// TestTranscript checks that every AgentCraft line goes through the whole
// transcript, calling the tool once a step, so that the benchmarks time
// the work they claim to.
func TestTranscript(t *testing.T) {
	for _, n := range stepCounts {
		t.Run(fmt.Sprintf("steps=%d", n), func(t *testing.T) {
			var calls []string
			x, err := autonomous.New(autonomous.Config{
				Agent: newAgent(n), Limits: autonomous.Limits{MaxSteps: n + 1}, NoReflection: true, ApproveFrom: -1,
				Emit: func(ev autonomous.Event) {
					if ev.Type == autonomous.EventToolResult {
						calls = append(calls, ev.Tool+"="+ev.Result)
					}
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := runAutonomous(t.Context(), x, n); err != nil {
				t.Error(err)
			}
			if len(calls) != n {
				t.Errorf("autonomous: %d tool results %v, want %d", len(calls), calls, n)
			}
			for _, c := range calls {
				if c != toolName+"="+toolResult {
					t.Errorf("autonomous: tool result %s, want %s=%s", c, toolName, toolResult)
				}
			}
			for _, buffered := range []bool{true, false} {
				if err := runAgent(t.Context(), newAgent(n), n, buffered); err != nil {
					t.Errorf("buffered=%v: %v", buffered, err)
				}
			}
		})
	}
}

// BenchmarkAutonomousReAct runs the autonomous executor (package
// autonomous) through the transcript: its default journal (in memory),
// history manager, guard scan of each tool result and budget; the twelve
// meta-tools are offered to the model on every step.
func BenchmarkAutonomousReAct(b *testing.B) {
	for _, n := range stepCounts {
		b.Run(fmt.Sprintf("steps=%d", n), func(b *testing.B) { benchAutonomous(b, n) })
	}
}

// BenchmarkAgentLoop runs the plain tool loop (agent.Agent.Generate,
// buffered: one model Generate a step).
func BenchmarkAgentLoop(b *testing.B) {
	for _, n := range stepCounts {
		b.Run(fmt.Sprintf("steps=%d", n), func(b *testing.B) { benchAgent(b, n, true) })
	}
}

// BenchmarkAgentLoopStream runs the plain tool loop over the model's
// Stream, as a streaming client's request does.
func BenchmarkAgentLoopStream(b *testing.B) {
	for _, n := range stepCounts {
		b.Run(fmt.Sprintf("steps=%d", n), func(b *testing.B) { benchAgent(b, n, false) })
	}
}

func benchAutonomous(b *testing.B, steps int) {
	x := newExecutor(b, steps)
	ctx := b.Context()
	measure(b, steps, func() error { return runAutonomous(ctx, x, steps) })
}

func benchAgent(b *testing.B, steps int, buffered bool) {
	a := newAgent(steps)
	ctx := b.Context()
	measure(b, steps, func() error { return runAgent(ctx, a, steps, buffered) })
}

// measure runs one run per op and reports ns/step, allocs/step and B/step
// (the op's figures divided by the tool steps: the final answer's model
// call is in the op, as it is on LangGraph's side) and cpu-ns/step, the
// process's CPU time per step, which a loaded machine inflates less than
// wall time.
func measure(b *testing.B, steps int, run func() error) {
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cpu0, cpuOK := cpuTime()
	for b.Loop() {
		if err := run(); err != nil {
			b.Fatal(err)
		}
	}
	cpu1, _ := cpuTime()
	runtime.ReadMemStats(&after)
	per := float64(b.N) * float64(steps)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/per, "ns/step")
	if cpuOK {
		b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/per, "cpu-ns/step")
	}
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/per, "allocs/step")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/per, "B/step")
}
