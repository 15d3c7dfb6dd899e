package nodes

import "github.com/agentcraftlab/agentcraft/workflow"

// contractKind checks the upstream output against a JSON Schema and repairs
// only what is safe; a failed contract stops every downstream node. Its
// flags are explained on normalize.
func contractKind() workflow.Kind {
	return workflow.Kind{
		Type:         "contract",
		Doc:          "Gates the upstream output on a JSON Schema, repairing only what is safe.",
		Execute:      execContract,
		IsExecutable: true,
		Config: []workflow.ConfigKey{
			{Name: "source", Type: workflow.TypeTemplate, Doc: "the value to check; default: the output of the node before"},
			{Name: "schema", Type: workflow.TypeObject, Required: true, Doc: "JSON Schema the value must match"},
			{Name: "repair", Type: workflow.TypeBoolean, Default: true, Doc: "repair safe mismatches (wrapped fields, numbers as strings, one value for an array)"},
		},
	}
}
