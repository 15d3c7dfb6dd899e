package nodes

import "github.com/agentcraftlab/agentcraft/workflow"

// autonomous plans and runs its own steps toward a goal. Its executor comes
// with the autonomous-agent (Flow planning) issue.
func autonomous() workflow.Kind {
	return workflow.Kind{
		Type:               "autonomous",
		Title:              "Autonomous agent",
		Category:           workflow.CategoryAgents,
		SideEffects:        true, // through the tools it plans to call
		Example:            map[string]any{"goal": "Summarise {{input}} in three bullet points"},
		Doc:                "Plans and runs its own steps toward a goal, within a budget.",
		IsExecutable:       true,
		RequiresImperative: true,
		IsAgentLike:        true,
		Unavailable:        "autonomous agents arrive with the agent planning (Flow) work",
		Config: []workflow.ConfigKey{
			{Name: "goal", Type: workflow.TypeTemplate, Required: true, Doc: "what the agent must achieve"},
			{Name: "max_steps", Type: workflow.TypeInteger, Min: atLeast(1), Default: 20, Doc: "most planned steps"},
		},
	}
}
