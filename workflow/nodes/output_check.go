package nodes

import (
	"context"
	"strings"

	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/contract"
)

// outputCheck rejects outputs with missing, empty, mistyped or placeholder
// fields. Its flags are explained on normalize.
func outputCheck() workflow.Kind {
	return workflow.Kind{
		Type:         "output_check",
		Title:        "Output check",
		Category:     workflow.CategoryQuality,
		Example:      map[string]any{"required": []any{"title"}},
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

// execOutputCheck refuses missing, empty, mistyped and placeholder fields;
// its output is the object it checked (decoded when it came as text).
func execOutputCheck(_ context.Context, x *workflow.Exec) (workflow.Result, error) {
	v, err := x.ConfigTemplate("source", "{{input}}")
	if err != nil {
		return workflow.Result{}, err
	}
	var rules contract.OutputRules
	for _, f := range asList(x.Node.Config["required"]) {
		if s, ok := f.(string); ok {
			rules.Required = append(rules.Required, s)
		}
	}
	if ts, ok := x.Node.Config["types"].(map[string]any); ok {
		rules.Types = map[string]string{}
		for k, t := range ts {
			rules.Types[k], _ = t.(string)
		}
	}
	rules.Forbidden = asList(x.Node.Config["forbidden"])
	res := contract.OutputCheck(v, rules)
	status := "ok"
	if !res.OK {
		status = "failed"
	}
	x.Emit(workflow.Event{Type: workflow.EventContract, Status: status, Data: res})
	if !res.OK {
		var msgs []string
		for _, p := range res.Problems {
			msgs = append(msgs, p.Field+": "+p.Message)
		}
		return workflow.Result{}, &workflow.ContractError{Message: strings.Join(msgs, "; "), Report: res}
	}
	return workflow.Result{Output: res.Value}, nil
}
