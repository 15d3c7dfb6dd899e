package nodes

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/agentcraftlab/agentcraft/agent"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/tool"
	"github.com/agentcraftlab/agentcraft/workflow"
)

// agentKind runs the agent tool loop, either a named agent of the workspace or
// one configured inline.
func agentKind() workflow.Kind {
	return workflow.Kind{
		Type:         "agent",
		Title:        "Agent",
		Category:     workflow.CategoryAgents,
		SideEffects:  true, // through the agent's tools
		Rules:        []string{"set agent (a workspace agent's name) or model (an inline agent), not both"},
		Example:      map[string]any{"model": "gpt-4.1-mini", "instructions": "You are a helpful assistant."},
		Doc:          "Runs an agent: a named one, or a model with instructions and tools.",
		Execute:      execAgent,
		IsExecutable: true,
		IsAgentLike:  true,
		Config: []workflow.ConfigKey{
			{Name: "agent", Type: workflow.TypeString, NamesAgent: true, Doc: "name of a workspace agent to run; or configure one inline with model"},
			{Name: "provider", Type: workflow.TypeString, Doc: "provider of an inline agent; default: the workspace default"},
			{Name: "model", Type: workflow.TypeString, Doc: "model of an inline agent, such as \"gpt-4.1-mini\""},
			{Name: "instructions", Type: workflow.TypeTemplate, Doc: "system instructions of an inline agent"},
			{Name: "prompt", Type: workflow.TypeTemplate, Default: "{{input}}", Doc: "user message sent to the agent"},
			{Name: "tools", Type: workflow.TypeArray, Elem: &workflow.ConfigKey{Type: workflow.TypeString, Doc: "tool name"}, Doc: "tool names an inline agent may call"},
			{Name: "max_turns", Type: workflow.TypeInteger, Min: atLeast(1), Default: 10, Doc: "most model turns of the tool loop"},
			{Name: "temperature", Type: workflow.TypeNumber, Min: atLeast(0), Doc: "sampling temperature of an inline agent"},
		},
		Check: func(cfg map[string]any, at string) []workflow.Problem {
			_, named := cfg["agent"]
			_, inline := cfg["model"]
			switch {
			case named && inline:
				return []workflow.Problem{{Path: at + ".model", Message: "both agent and model are set", Hint: "use agent to run a named agent, or model (with instructions and tools) for an inline one, not both"}}
			case !named && !inline:
				return []workflow.Problem{{Path: at + ".agent", Message: "missing agent or model", Hint: "set agent to a workspace agent's name, or model to configure the agent inline"}}
			}
			return nil
		},
	}
}

// execAgent runs an agent node: the named workspace agent or an inline
// one, with the rendered prompt as the user message. With several
// outgoing edges (handoff) the agent also gets one handoff_to_<node> tool
// per target; the one it calls decides where the run goes next. Its answer
// text is the node's output; text, tool calls and usage become events.
func execAgent(ctx context.Context, x *workflow.Exec) (workflow.Result, error) {
	if x.Services.Agents == nil {
		return workflow.Result{}, fmt.Errorf("agent nodes need an agent resolver, and none is configured")
	}
	a, err := resolveAgent(ctx, x)
	if err != nil {
		return workflow.Result{}, err
	}
	promptV, err := x.ConfigTemplate("prompt", "{{input}}")
	if err != nil {
		return workflow.Result{}, err
	}
	prompt, err := textOf(promptV)
	if err != nil {
		return workflow.Result{}, err
	}
	if x.Hooks != nil {
		if prompt, err = x.Hooks.PreAgent(ctx, x, prompt); err != nil {
			return workflow.Result{}, err
		}
	}
	var choice handoffChoice
	if len(x.Handoffs) > 0 {
		withHandoffs := *a
		withHandoffs.Tools = append(append([]tool.Tool(nil), a.Tools...), handoffTools(x.Handoffs, &choice)...)
		a = &withHandoffs
	}
	in := agent.Input{Messages: []llm.Message{llm.Text(llm.RoleUser, prompt)}, Buffered: !x.Emitting()}
	var text strings.Builder
	for ev, err := range a.Run(ctx, in) {
		if err != nil {
			return workflow.Result{}, err
		}
		switch ev.Type {
		case agent.EventTextDelta:
			text.WriteString(ev.Text)
			x.Emit(workflow.Event{Type: workflow.EventTextDelta, Text: ev.Text})
		case agent.EventToolStarted:
			x.Emit(workflow.Event{Type: workflow.EventToolCall, Tool: &workflow.ToolEvent{CallID: ev.Tool.CallID, Name: ev.Tool.Name, Arguments: ev.Tool.Arguments}})
		case agent.EventToolFinished:
			x.Emit(workflow.Event{Type: workflow.EventToolResult, Tool: &workflow.ToolEvent{CallID: ev.Tool.CallID, Name: ev.Tool.Name, Result: ev.Tool.Result, IsError: ev.Tool.IsError}})
		case agent.EventFinish:
			if ev.Usage != nil {
				x.Emit(workflow.Event{Type: workflow.EventUsage, Usage: ev.Usage})
			}
		}
	}
	out := text.String()
	if x.Hooks != nil {
		if out, err = x.Hooks.PostAgent(ctx, x, out); err != nil {
			return workflow.Result{}, err
		}
	}
	return workflow.Result{Output: out, HandoffTo: choice.get()}, nil
}

// handoffChoice records the first handoff the agent asked for.
type handoffChoice struct {
	mu     sync.Mutex
	target string
}

func (c *handoffChoice) set(t string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.target != "" && c.target != t {
		return false
	}
	c.target = t
	return true
}

func (c *handoffChoice) get() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.target
}

// handoffTool is the generated handoff_to_<node> tool.
type handoffTool struct {
	target string
	choice *handoffChoice
}

func handoffTools(targets []string, c *handoffChoice) []tool.Tool {
	out := make([]tool.Tool, 0, len(targets))
	for _, t := range targets {
		out = append(out, handoffTool{target: t, choice: c})
	}
	return out
}

func (h handoffTool) Name() string {
	n := "handoff_to_" + h.target
	if len(n) > 64 {
		n = n[:64]
	}
	return n
}

func (h handoffTool) Description() string {
	return "Hand the conversation to " + h.target + " when it should handle the rest. Call at most one handoff tool, then give a short summary for it."
}

func (h handoffTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{}}`)
}

func (h handoffTool) Capability() tool.Capability { return tool.CapabilityLow }

func (h handoffTool) Call(context.Context, json.RawMessage) (tool.Result, error) {
	if !h.choice.set(h.target) {
		return tool.ErrorResult("already handed off to %s; only one handoff is possible", h.choice.get()), nil
	}
	return tool.Result{Content: "Handed off to " + h.target + ". Write a short summary of the request for it."}, nil
}

// resolveAgent returns the node's agent: the named workspace agent, or the
// inline one its config describes.
func resolveAgent(ctx context.Context, x *workflow.Exec) (*agent.Agent, error) {
	var (
		a   *agent.Agent
		err error
	)
	if name, ok := x.Node.Config["agent"].(string); ok {
		a, err = x.Services.Agents.Named(ctx, x.AgentCall(), name)
	} else {
		spec := workflow.InlineAgent{MaxTurns: intOr(x.Node.Config["max_turns"], 0)}
		spec.Provider, _ = x.Node.Config["provider"].(string)
		spec.Model, _ = x.Node.Config["model"].(string)
		if s, ok := x.Node.Config["instructions"].(string); ok {
			if spec.Instructions, err = x.Render(s); err != nil {
				return nil, fmt.Errorf("config.instructions: %w", err)
			}
		}
		if ts, ok := x.Node.Config["tools"].([]any); ok {
			for _, t := range ts {
				if s, ok := t.(string); ok {
					spec.Tools = append(spec.Tools, s)
				}
			}
		}
		if t, ok := x.Node.Config["temperature"].(float64); ok {
			spec.Temperature = &t
		}
		a, err = x.Services.Agents.Inline(ctx, x.AgentCall(), spec)
	}
	return a, err
}
