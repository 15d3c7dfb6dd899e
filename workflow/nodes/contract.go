package nodes

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/contract"
)

// contractKind checks the upstream output against a JSON Schema and repairs
// only what is safe; a failed contract stops every downstream node. Its
// flags are explained on normalize.
func contractKind() workflow.Kind {
	return workflow.Kind{
		Type:         "contract",
		Title:        "Contract",
		Category:     workflow.CategoryQuality,
		Example:      map[string]any{"schema": map[string]any{"type": "object", "required": []any{"title"}}},
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

// schemas caches each contract node's compiled schema; the key is the
// node of a prepared plan, which never changes.
var schemas sync.Map // *workflow.Node → *contract.Schema

// execContract validates the upstream output against the schema,
// repairing only what is safe; a failed contract ends the run
// failed_contract before anything downstream runs.
func execContract(_ context.Context, x *workflow.Exec) (workflow.Result, error) {
	v, err := x.ConfigTemplate("source", "{{input}}")
	if err != nil {
		return workflow.Result{}, err
	}
	s, err := schemaOf(x.Node)
	if err != nil {
		return workflow.Result{}, err
	}
	repair := true
	if b, ok := x.Node.Config["repair"].(bool); ok {
		repair = b
	}
	res := contract.Check(v, s, repair, nil)
	x.Emit(workflow.Event{Type: workflow.EventContract, Status: string(res.Contract.Status), Data: res})
	if res.Contract.Status == contract.StatusFailed {
		return workflow.Result{}, &workflow.ContractError{Message: contractFailure(res.Contract), Report: res}
	}
	out, err := jsonNative(map[string]any{"raw": res.Raw, "normalized": res.Normalized, "contract": res.Contract})
	if err != nil {
		return workflow.Result{}, err
	}
	return workflow.Result{Output: out}, nil
}

func contractFailure(r contract.Report) string {
	var parts []string
	if len(r.MissingRequired) > 0 {
		parts = append(parts, "missing required "+strings.Join(r.MissingRequired, ", "))
	}
	if len(r.InvalidTypes) > 0 {
		parts = append(parts, "invalid types at "+strings.Join(r.InvalidTypes, ", "))
	}
	if len(parts) == 0 && len(r.Notes) > 0 {
		parts = append(parts, r.Notes[0])
	}
	return strings.Join(parts, "; ")
}

func schemaOf(n *workflow.Node) (*contract.Schema, error) {
	if s, ok := schemas.Load(n); ok {
		return s.(*contract.Schema), nil
	}
	raw, _ := n.Config["schema"].(map[string]any)
	s, err := contract.Compile(raw)
	if err != nil {
		return nil, fmt.Errorf("config.schema: %w", err)
	}
	schemas.Store(n, s)
	return s, nil
}
