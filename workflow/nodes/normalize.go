package nodes

import "github.com/agentcraftlab/agentcraft/workflow"

// normalize fills defaults for optional inputs and reports
// {original, normalized, defaults_applied}.
//
// Contract kinds (normalize, contract, output_check) are executable but
// neither imperative nor agent-like: they run once, in order, on their
// upstream output, and a failure ends the run (failed_contract), which every
// strategy can do. Making them imperative would force the imperative engine
// on every pipeline that checks its hand-offs, which is exactly where the
// simpler strategies should stay available.
func normalize() workflow.Kind {
	return workflow.Kind{
		Type:         "normalize",
		Doc:          "Fills defaults for optional inputs; later nodes read the normalized values.",
		Execute:      execNormalize,
		IsExecutable: true,
		Config: []workflow.ConfigKey{
			{Name: "source", Type: workflow.TypeTemplate, Default: "{{input}}", Doc: "the value to normalize"},
			{Name: "defaults", Type: workflow.TypeObject, Required: true, Doc: "field → default value for fields that are missing or empty"},
		},
	}
}
