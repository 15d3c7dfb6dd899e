// Package nodes defines AgentCraft's built-in workflow node kinds, one file
// per kind, and registers them explicitly with [RegisterBuiltins]:
//
//	reg := workflow.NewRegistry()
//	if err := nodes.RegisterBuiltins(reg); err != nil { ... }
//
// Each file returns a [workflow.Kind]: the kind's flags, its config keys
// (types, defaults, one-line docs), any cross-key checks and its executor
// (Kind.Execute), in that one file. A kind without an executor yet
// (autonomous) sets Kind.Unavailable, and validation rejects it.
// Compound kinds (loop, iteration, parallel) are run by the engine itself.
// docs/workflow.md lists the steps to add a kind.
package nodes

import (
	"encoding/json"
	"fmt"

	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/transform"
)

// builtins lists every built-in kind. Adding a kind is one file returning its
// workflow.Kind plus one line here.
var builtins = []func() workflow.Kind{
	start,
	end,
	agentKind,
	condition,
	loop,
	router,
	human,
	code,
	iteration,
	parallel,
	httpRequest,
	normalize,
	contractKind,
	outputCheck,
	ragKind,
	a2aAgent,
	autonomousKind,
	toolKind,
	approval,
	imageKind,
}

// RegisterBuiltins registers every built-in node kind with reg.
func RegisterBuiltins(reg *workflow.Registry) error {
	for _, k := range builtins {
		if err := reg.Register(k()); err != nil {
			return fmt.Errorf("nodes: %w", err)
		}
	}
	return nil
}

// atLeast is a ConfigKey.Min.
func atLeast(f float64) *float64 { return &f }

// inputKey is the template key of kinds that read one input value.
func inputKey(doc string) workflow.ConfigKey {
	return workflow.ConfigKey{Name: "input", Type: workflow.TypeTemplate, Default: "{{input}}", Doc: doc}
}

// textOf is a value as text for a prompt.
func textOf(v any) (string, error) { return transform.Text(v) }

func intOr(v any, def int) int {
	if f, ok := v.(float64); ok {
		return int(f)
	}
	return def
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

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}
