package nodes

import "github.com/agentcraftlab/agentcraft/workflow"

// condition branches on a boolean expression; its edges leave by
// sourceHandle "true" or "false".
func condition() workflow.Kind {
	return workflow.Kind{
		Type:               "condition",
		Doc:                "Branches on an expression; edges leave by sourceHandle true or false.",
		Execute:            execCondition,
		IsExecutable:       true,
		RequiresImperative: true,
		Config: []workflow.ConfigKey{
			{Name: "expression", Type: workflow.TypeExpression, Required: true, Doc: "expr-lang expression yielding true or false, such as nodes.review.output.score >= 3"},
		},
		Handles: func(map[string]any) []string { return []string{"true", "false"} },
	}
}
