package nodes

import "github.com/agentcraftlab/agentcraft/workflow"

// end marks where a run finishes and what it answers.
func end() workflow.Kind {
	return workflow.Kind{
		Type:     "end",
		Title:    "End",
		Category: workflow.CategoryFlow,
		Example:  map[string]any{},
		Doc:      "Where a run finishes; its output is the run's answer.",
		IsMeta:   true,
		Config: []workflow.ConfigKey{
			{Name: "output", Type: workflow.TypeTemplate, Doc: "template of the run's answer; default: the output of the node before end"},
		},
	}
}
