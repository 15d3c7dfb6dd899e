package nodes

import "github.com/agentcraftlab/agentcraft/workflow"

// outputCheck rejects outputs with missing, empty, mistyped or placeholder
// fields. Its flags are explained on normalize.
func outputCheck() workflow.Kind {
	return workflow.Kind{
		Type:         "output_check",
		Doc:          "Rejects missing, empty, mistyped or placeholder fields in the final output.",
		Execute:      execOutputCheck,
		IsExecutable: true,
		Config: []workflow.ConfigKey{
			{Name: "source", Type: workflow.TypeTemplate, Doc: "the value to check; default: the output of the node before"},
			{Name: "required", Type: workflow.TypeArray, Required: true, Elem: &workflow.ConfigKey{Type: workflow.TypeString, Doc: "field name"}, Doc: "fields that must be present and non-empty"},
			{Name: "types", Type: workflow.TypeObject, Doc: "field → JSON type (string, number, integer, boolean, array, object)"},
			{Name: "forbidden", Type: workflow.TypeArray, Doc: "fixed fallback values that must not appear as a field's value"},
		},
	}
}
