package nodes

import "github.com/agentcraftlab/agentcraft/workflow"

// parallel fans out to every outgoing edge and merges the branches.
func parallel() workflow.Kind {
	return workflow.Kind{
		Type:               "parallel",
		Title:              "Parallel",
		Category:           workflow.CategoryFlow,
		Example:            map[string]any{"merge": "by_branch"},
		Doc:                "Runs every outgoing branch at once and merges their outputs.",
		IsExecutable:       true,
		RequiresImperative: true,
		Compound:           workflow.CompoundParallel,
		Config: []workflow.ConfigKey{
			{Name: "merge", Type: workflow.TypeString, Enum: []string{"concatenate", "by_branch", "first"}, Default: "concatenate", Doc: "how branch outputs merge: joined text, a JSON object by branch, or the first to finish"},
			{Name: "separator", Type: workflow.TypeString, Default: "\n\n", Doc: "text between branch outputs (concatenate)"},
		},
	}
}
