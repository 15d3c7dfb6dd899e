package nodes

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/contract"
)

// schemas caches each contract node's compiled schema; the key is the
// node of a prepared plan, which never changes.
var schemas sync.Map // *workflow.Node → *contract.Schema

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

// jsonNative returns v as JSON decodes it (maps, []any, float64 …), so
// templates and expressions can walk it and a replayed checkpoint equals
// the live value.
func jsonNative(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode output: %w", err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("decode output: %w", err)
	}
	return out, nil
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

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}
