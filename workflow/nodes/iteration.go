package nodes

import "github.com/agentcraftlab/agentcraft/workflow"

// iteration runs its body once per item of a list. The body starts at the
// edges leaving by sourceHandle "body" and ends where those nodes have no
// successor; the way on leaves by "done", with the list of the body's
// outputs (one per item, in item order) as the node's output.
func iteration() workflow.Kind {
	return workflow.Kind{
		Type:               "iteration",
		Title:              "Iteration",
		Category:           workflow.CategoryFlow,
		Rules:              []string{"split delimiter needs delimiter; split regex needs pattern"},
		Example:            map[string]any{"items": "{{input}}"},
		Doc:                "Runs the following nodes once per item of a list, with a concurrency limit.",
		IsExecutable:       true,
		RequiresImperative: true,
		Compound:           workflow.CompoundIteration,
		Config: []workflow.ConfigKey{
			{Name: "items", Type: workflow.TypeTemplate, Required: true, Doc: "the list, such as {{nodes.plan.output}}"},
			{Name: "split", Type: workflow.TypeString, Enum: []string{"json", "lines", "delimiter", "regex"}, Default: "json", Doc: "how the list is split into items"},
			{Name: "delimiter", Type: workflow.TypeString, Doc: "item separator (delimiter split)"},
			{Name: "pattern", Type: workflow.TypeRegexp, Doc: "RE2 separator (regex split)"},
			{Name: "max_items", Type: workflow.TypeInteger, Min: atLeast(1), Default: 50, Doc: "most items processed; more fail the node"},
			{Name: "concurrency", Type: workflow.TypeInteger, Min: atLeast(1), Default: 1, Doc: "items processed at the same time"},
		},
		Handles: func(map[string]any) []string { return []string{"body", "done"} },
		Check: func(cfg map[string]any, at string) []workflow.Problem {
			need := map[string]string{"delimiter": "delimiter", "regex": "pattern"}[stringOr(cfg["split"], "json")]
			if need == "" {
				return nil
			}
			if _, ok := cfg[need]; !ok {
				return []workflow.Problem{{Path: at + "." + need, Message: "split " + cfg["split"].(string) + " needs " + need, Hint: "add " + need + " or choose another split"}}
			}
			return nil
		},
	}
}

func stringOr(v any, def string) string {
	if s, ok := v.(string); ok {
		return s
	}
	return def
}
