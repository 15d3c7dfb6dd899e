// Package agent runs an agent: a model, instructions and tools, driven in
// a loop until the model gives an answer.
//
// Run streams one exchange. Each step calls the model with the agent's
// tools (executed here, on the server) and the API client's tools
// (returned to the client, never executed here). Text is forwarded as it
// arrives. When the model asks for server tools, they run concurrently,
// their results go back to the model, and the next step starts; the
// client sees ToolStarted and ToolFinished progress events, never the
// calls themselves, because OpenAI-compatible front ends such as Open
// WebUI would try to execute every tool call they receive. When the model
// asks for client tools, the run ends with finish reason tool_calls and
// the calls, renumbered, are the client's to execute.
//
//	a := &agent.Agent{Name: "helper", Model: model, ModelID: "gpt-4o-mini", Tools: tools}
//	for ev, err := range a.Run(ctx, agent.Input{Messages: msgs}) {
//		if err != nil { ... } // an *llm.Error from the model keeps its Kind
//		switch ev.Type { case agent.EventTextDelta: ... }
//	}
//
// Generate collects Run into a Result.
package agent

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"log/slog"
	"strings"
	"time"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/tool"
)

// DefaultMaxSteps is the step limit when Agent.MaxSteps is not set.
const DefaultMaxSteps = 10

// DefaultToolTimeout bounds one server tool call when Agent.ToolTimeout is
// not set.
const DefaultToolTimeout = 60 * time.Second

// DefaultMaxToolResultBytes bounds the tool result the model receives when
// Agent.MaxToolResultBytes is not set: 16 KiB, about 4,000 tokens.
const DefaultMaxToolResultBytes = 16 << 10

// ProgressLen bounds, in characters, the tool result carried by an
// EventToolFinished; the model always receives the whole result.
const ProgressLen = 500

// Agent is the configuration of an agent. Set its fields, then call Run or
// Generate, as often and as concurrently as needed; don't change the
// fields while runs are in progress.
type Agent struct {
	// Name identifies the agent in logs.
	Name string
	// Model answers; usually a provider wrapped in middleware. Required.
	Model llm.Model
	// ModelID is the provider's model id, sent as llm.Request.Model.
	ModelID string
	// Instructions become the first system message of every request,
	// ahead of any system message the client sent. Default: none.
	Instructions string
	// Tools are run by the agent itself when the model calls them.
	// Default: none.
	Tools []tool.Tool
	// Temperature, when non-nil, is sent with every request.
	Temperature *float64
	// MaxTokens caps each model answer; 0 leaves the provider's default.
	MaxTokens int
	// MaxSteps bounds the model calls of one run. Default (zero or
	// negative): DefaultMaxSteps.
	MaxSteps int
	// TokenBudget bounds the tokens of one run: input plus output, summed
	// over its model calls as the provider reports them. When a step that
	// calls tools brings the total to the budget or past it, the tools do
	// not run and the run ends as it does at MaxSteps, with a note and
	// finish reason length; a final answer is never cut. Default (zero or
	// negative): no budget.
	TokenBudget int
	// ToolTimeout bounds each server tool call: its context is cancelled
	// then, and the model gets an error result saying the call timed out.
	// Tools must honour their context (tool.Tool.Call). Default (zero):
	// DefaultToolTimeout; negative: no timeout.
	ToolTimeout time.Duration
	// ToolTimeouts overrides ToolTimeout for the tools it names, by tool
	// name (zero: ToolTimeout; negative: no timeout). Default: none.
	ToolTimeouts map[string]time.Duration
	// MaxToolResultBytes bounds, in bytes, the result of one tool call that
	// the model receives; a longer result is cut at a character boundary
	// and ends with "[truncated: N of M bytes; ask for less]", so that one
	// large file or page cannot fill the context window. Default (zero):
	// DefaultMaxToolResultBytes; negative: no limit.
	MaxToolResultBytes int
	// Logger receives tool failures and panics. Default: discard.
	Logger *slog.Logger
	// Warnings are yielded as EventWarning at the start of every run:
	// what the agent runs without, such as the tools of an MCP server
	// that is down. Default: none.
	Warnings []string
	// Observe, when set, is called as each run begins; the context it
	// returns is the run's, and the function it returns is called once
	// when the run ends — finished, failed, or abandoned by a caller that
	// stopped reading (Err is then context.Canceled). The run seam (package
	// run) uses it to meter, record usage and scope audit events the same
	// way whichever surface runs the agent. Default: none.
	Observe func(ctx context.Context) (context.Context, func(RunEnd))
	// Gate, when set, decides each server tool call before it runs: the
	// one place where a call can be held for a decision (capability
	// approvals). Default: every call runs.
	Gate Gate
	// ToolCalls, when set, is told of every server tool call as it ends:
	// the tool's name (ToolUnknownName for a name the agent has none
	// of, so the model's invention never reaches it), how it ended and
	// how long it took. Metrics use it (metrics.Metrics.ToolCall).
	// Default: none.
	ToolCalls func(tool string, outcome ToolOutcome, d time.Duration)
}

// RunEnd is how a run ended, as Agent.Observe learns it.
type RunEnd struct {
	// Usage is the tokens of every model call of the run (of a run that
	// failed or was stopped, the calls made before it ended).
	Usage        llm.Usage
	Steps        int
	FinishReason llm.FinishReason
	// Err is the error that ended the run; nil when it finished.
	Err error
}

// Gate decides whether a server tool call may run. Allow may block until
// a decision is made (it must honour ctx); an error refuses the call, and
// its text reaches the model as the call's error result, so the model can
// answer without the tool.
type Gate interface {
	Allow(ctx context.Context, t tool.Tool, call llm.ToolCall) error
}

// Input is one exchange asked of an agent, as an API client sends it.
type Input struct {
	// Messages is the conversation so far, the newest last. The client's
	// own system messages are kept, after the agent's instructions.
	Messages []llm.Message
	// ClientTools are tools the client offers. When the model calls one,
	// the run ends and the call is returned to the client, which executes
	// it and sends the result in its next request. Their names must not
	// clash with the agent's tools.
	ClientTools []llm.ToolDef
	// ToolChoice is passed to the model on the first step ("", "auto",
	// "none", "required" or a tool name). Later steps use the default
	// (auto): keeping "required" or a named tool would force a tool call
	// on every step until MaxSteps.
	ToolChoice string
	// User attributes the requests to an end user, when known.
	User string
	// Buffered says the caller collects the whole answer rather than
	// showing it as it comes: the agent then asks the model with Generate,
	// one upstream response per step instead of a stream of chunks, which
	// costs the provider, the network and AgentCraft less. The events
	// are the same, with each step's text in one delta.
	Buffered bool
	// MaxSteps, when positive, lowers the agent's MaxSteps for this run;
	// it cannot raise it.
	MaxSteps int
	// TokenBudget, when positive, lowers the agent's TokenBudget for this
	// run (or sets one where the agent has none); it cannot raise it.
	TokenBudget int
}

// EventType is the kind of an Event.
type EventType string

// Event types of a run.
const (
	// EventTextDelta carries a fragment of the answer in Text.
	EventTextDelta EventType = "text_delta"
	// EventReasoningDelta carries a fragment of the model's reasoning in Text.
	EventReasoningDelta EventType = "reasoning_delta"
	// EventToolCallDelta carries, in ToolCall, a fragment of a call of a
	// client tool, its Index counting client calls only (0, 1, …).
	EventToolCallDelta EventType = "tool_call_delta"
	// EventToolStarted reports, in Tool, that a server tool is about to run.
	EventToolStarted EventType = "tool_started"
	// EventToolFinished reports, in Tool, a server tool's outcome.
	EventToolFinished EventType = "tool_finished"
	// EventFinish ends a run: FinishReason, Usage, Steps and Messages.
	EventFinish EventType = "finish"
	// EventWarning says, in Text, that the run goes on without something
	// it was configured with (Agent.Warnings); it comes before the first
	// step, with Step 0.
	EventWarning EventType = "warning"
)

// Event is one item of a run's stream.
type Event struct {
	Type EventType `json:"type"`
	// Step is the model call (1, 2, …) the event belongs to.
	Step int    `json:"step"`
	Text string `json:"text,omitempty"`
	// ToolCall is a client tool call fragment (EventToolCallDelta).
	ToolCall *llm.ToolCallDelta `json:"tool_call,omitempty"`
	// Tool describes a server tool call (EventToolStarted, EventToolFinished).
	Tool *ToolActivity `json:"tool,omitempty"`
	// FinishReason says why the run ended (EventFinish): the model's own
	// reason for its last answer; tool_calls when client tools were
	// called; length when MaxSteps or TokenBudget ran out.
	FinishReason llm.FinishReason `json:"finish_reason,omitempty"`
	// Usage is the sum over all steps (EventFinish).
	Usage *llm.Usage `json:"usage,omitempty"`
	// Steps is the number of model calls made (EventFinish).
	Steps int `json:"steps,omitempty"`
	// Messages are the messages the run adds to the conversation
	// (EventFinish): for each tool step the assistant message with its
	// calls and the tool results, in call order; then the final assistant
	// message. Appended to Input.Messages they form a valid transcript.
	Messages []llm.Message `json:"messages,omitempty"`
}

// ToolActivity describes one call of a server tool.
type ToolActivity struct {
	CallID string `json:"call_id"`
	Name   string `json:"name"`
	// Arguments is the JSON the model wrote (EventToolStarted).
	Arguments string `json:"arguments,omitempty"`
	// Result is the tool's answer cut to ProgressLen characters
	// (EventToolFinished).
	Result string `json:"result,omitempty"`
	// Content is the whole result as the model receives it, after
	// MaxToolResultBytes (EventToolFinished). It is not serialised:
	// progress displays use Result; the internal chat API shows Content.
	Content string `json:"-"`
	IsError bool   `json:"is_error,omitempty"`
	// Duration is how long the call took (EventToolFinished).
	Duration time.Duration `json:"duration,omitempty"`
}

// Result is a collected run.
type Result struct {
	// Message is the answer as a streaming client would have seen it: all
	// text of the run, and the client tool calls when FinishReason is
	// tool_calls.
	Message      llm.Message
	FinishReason llm.FinishReason
	Usage        llm.Usage
	Steps        int
	// Messages are the messages the run added; see Event.Messages.
	Messages []llm.Message
}

// Generate runs the agent and collects the stream. On error it returns
// what was collected so far with the error.
func (a *Agent) Generate(ctx context.Context, in Input) (Result, error) {
	return Collect(a.Run(ctx, in))
}

// Collect collects the events of a run, as Generate does, for a caller
// that wraps Run (the run seam does). On error it returns what was
// collected so far with the error.
func Collect(events iter.Seq2[Event, error]) (Result, error) {
	var (
		res   Result
		text  strings.Builder
		calls []llm.ToolCall // client calls by their (contiguous) index
	)
	message := func() llm.Message {
		m := llm.Message{Role: llm.RoleAssistant, ToolCalls: calls}
		if text.Len() > 0 {
			m.Content = []llm.Part{{Type: llm.PartText, Text: text.String()}}
		}
		return m
	}
	for ev, err := range events {
		if err != nil {
			res.Message = message()
			return res, err
		}
		switch ev.Type {
		case EventTextDelta:
			text.WriteString(ev.Text)
		case EventToolCallDelta:
			d := ev.ToolCall
			for len(calls) <= d.Index {
				calls = append(calls, llm.ToolCall{})
			}
			c := &calls[d.Index]
			c.ID = cmp.Or(d.ID, c.ID)
			c.Name = cmp.Or(d.Name, c.Name)
			c.Arguments += d.ArgumentsDelta
		case EventFinish:
			res.FinishReason = ev.FinishReason
			if ev.Usage != nil {
				res.Usage = *ev.Usage
			}
			res.Steps = ev.Steps
			res.Messages = ev.Messages
		}
	}
	res.Message = message()
	return res, nil
}

// Validate reports a configuration Run would refuse.
func (a *Agent) Validate() error {
	_, err := a.toolIndex()
	return err
}

func (a *Agent) toolIndex() (map[string]tool.Tool, error) {
	if a.Model == nil {
		return nil, fmt.Errorf("agent %q: Model is required", a.Name)
	}
	idx := make(map[string]tool.Tool, len(a.Tools))
	for i, t := range a.Tools {
		if t == nil {
			return nil, fmt.Errorf("agent %q: Tools[%d] is nil", a.Name, i)
		}
		name := t.Name()
		if err := tool.ValidateName(name); err != nil {
			return nil, fmt.Errorf("agent %q: Tools[%d]: %w", a.Name, i, err)
		}
		if _, dup := idx[name]; dup {
			return nil, fmt.Errorf("agent %q: tool %q is listed twice", a.Name, name)
		}
		idx[name] = t
	}
	return idx, nil
}

// errNoFinish reports a model stream that ended without its finish event.
var errNoFinish = &llm.Error{Kind: llm.KindProvider, Message: "stream ended without a finish event", Err: llm.ErrIncompleteStream}
