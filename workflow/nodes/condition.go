package nodes

import (
	"context"
	"fmt"

	"github.com/agentcraftlab/agentcraft/workflow"
)

// condition branches on a boolean expression; its edges leave by
// sourceHandle "true" or "false".
func condition() workflow.Kind {
	return workflow.Kind{
		Type:               "condition",
		Title:              "Condition",
		Category:           workflow.CategoryFlow,
		Example:            map[string]any{"expression": `input != ""`},
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

// execCondition evaluates the expression and leaves by "true" or "false";
// its output is its input, so the branch sees the same data.
func execCondition(_ context.Context, x *workflow.Exec) (workflow.Result, error) {
	ok, err := x.Eval("")
	if err != nil {
		return workflow.Result{}, fmt.Errorf("expression: %w", err)
	}
	return workflow.Result{Output: x.Input, Handle: fmt.Sprint(ok)}, nil
}
