package nodes

import (
	"github.com/agentcraftlab/agentcraft/workflow"
)

// agentKind runs the agent tool loop, either a named agent of the workspace or
// one configured inline.
func agentKind() workflow.Kind {
	return workflow.Kind{
		Type:         "agent",
		Doc:          "Runs an agent: a named one, or a model with instructions and tools.",
		Execute:      execAgent,
		IsExecutable: true,
		IsAgentLike:  true,
		Config: []workflow.ConfigKey{
			{Name: "agent", Type: workflow.TypeString, Doc: "name of a workspace agent to run; or configure one inline with model"},
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
