package nodes

import "github.com/agentcraftlab/agentcraft/workflow"

// start marks where a run begins; its output is the run's input.
func start() workflow.Kind {
	return workflow.Kind{
		Type:     "start",
		Title:    "Start",
		Category: workflow.CategoryFlow,
		Example:  map[string]any{},
		Doc:      "Where a run begins; its output is the run's input.",
		IsMeta:   true,
		Config: []workflow.ConfigKey{
			{Name: "input_schema", Type: workflow.TypeObject, Doc: "JSON Schema the run input must match"},
		},
	}
}
