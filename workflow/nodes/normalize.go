package nodes

import (
	"context"

	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/contract"
)

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
		Title:        "Normalize",
		Category:     workflow.CategoryQuality,
		Example:      map[string]any{"defaults": map[string]any{"language": "en"}},
		Doc:          "Fills defaults for optional inputs; later nodes read the normalized values.",
		Execute:      execNormalize,
		IsExecutable: true,
		Config: []workflow.ConfigKey{
			{Name: "source", Type: workflow.TypeTemplate, Default: "{{input}}", Doc: "the value to normalize"},
			{Name: "defaults", Type: workflow.TypeObject, Required: true, Doc: "field → default value for fields that are missing or empty"},
		},
	}
}

// execNormalize fills defaults and outputs {original, normalized,
// defaults_applied}; later nodes read output.normalized.
func execNormalize(_ context.Context, x *workflow.Exec) (workflow.Result, error) {
	v, err := x.ConfigTemplate("source", "{{input}}")
	if err != nil {
		return workflow.Result{}, err
	}
	defaults, _ := x.Node.Config["defaults"].(map[string]any)
	res := contract.Normalize(v, defaults)
	out, err := jsonNative(map[string]any{"original": res.Original, "normalized": res.Normalized, "defaults_applied": res.DefaultsApplied})
	if err != nil {
		return workflow.Result{}, err
	}
	return workflow.Result{Output: out}, nil
}
