package nodes

import "github.com/agentcraftlab/agentcraft/workflow"

// loop repeats its body while a condition holds, at most max_iterations
// times. The body leaves by sourceHandle "body" and comes back to the loop
// node; the way out leaves by "done". It is the only node a cycle may pass
// through.
func loop() workflow.Kind {
	return workflow.Kind{
		Type:               "loop",
		Title:              "Loop",
		Category:           workflow.CategoryFlow,
		Example:            map[string]any{"condition": "iteration < 3"},
		Doc:                "Repeats its body while a condition holds; edges leave by sourceHandle body or done.",
		IsExecutable:       true,
		RequiresImperative: true,
		Compound:           workflow.CompoundLoop,
		Config: []workflow.ConfigKey{
			{Name: "condition", Type: workflow.TypeExpression, Required: true, Doc: "expr-lang expression; the body runs again while it is true"},
			{Name: "max_iterations", Type: workflow.TypeInteger, Min: atLeast(1), Default: 10, Doc: "most times the body runs"},
		},
		Handles: func(map[string]any) []string { return []string{"body", "done"} },
	}
}
