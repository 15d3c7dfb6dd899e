package controlplane

import (
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/workflow"
)

// AgentDefinition is the one-node workflow that runs a workspace agent as a
// durable run: start → agent (the named agent, {{input}} as its prompt) →
// end, or, for an autonomous agent (au not nil), start → autonomous (the
// agent, its limits, {{input}} as the goal) → end. The chat surfaces and
// triggers start agents through it, so an agent run is a run like any
// other: queued, checkpointed, resumable and listed.
func AgentDefinition(name string, au *store.AgentAutonomous) *workflow.Definition {
	if au == nil {
		return &workflow.Definition{Name: "agent-" + name, Description: "run of agent " + name,
			Nodes: []workflow.Node{{ID: "start", Type: "start"}, {ID: "agent", Type: "agent", Config: map[string]any{"agent": name, "prompt": "{{input}}"}},
				{ID: "end", Type: "end"}},
			Edges: []workflow.Edge{{ID: "e1", Source: "start", Target: "agent"}, {ID: "e2", Source: "agent", Target: "end"}}}
	}
	cfg := map[string]any{"agent": name, "goal": "{{input}}"}
	if au.Planner != "" {
		cfg["planner"] = au.Planner
	}
	for k, v := range map[string]int{"max_steps": au.MaxSteps, "max_tokens": au.MaxTokens, "max_depth": au.MaxDepth, "max_sub_agents": au.MaxSubAgents} {
		if v > 0 {
			cfg[k] = v
		}
	}
	if len(au.AutoApprove) > 0 {
		list := make([]any, len(au.AutoApprove))
		for i, t := range au.AutoApprove {
			list[i] = t
		}
		cfg["auto_approve"] = list
	}
	return &workflow.Definition{Name: "autonomous-" + name, Description: "chat with autonomous agent " + name,
		Nodes: []workflow.Node{{ID: "start", Type: "start"}, {ID: "agent", Type: "autonomous", Config: cfg}, {ID: "end", Type: "end"}},
		Edges: []workflow.Edge{{ID: "e1", Source: "start", Target: "agent"}, {ID: "e2", Source: "agent", Target: "end"}}}
}
