// Package nodes defines AgentCraft's built-in workflow node kinds, one file
// per kind, and registers them explicitly with [RegisterBuiltins]:
//
//	reg := workflow.NewRegistry()
//	if err := nodes.RegisterBuiltins(reg); err != nil { ... }
//
// Each file returns a [workflow.Kind]: the kind's flags, its config keys
// (types, defaults, one-line docs) and any cross-key checks. Executors will
// join them in the same files; until a kind has one, its Kind.Unavailable
// says so and validation rejects it. docs/workflow.md lists the steps to add
// a kind.
package nodes

import (
	"fmt"

	"github.com/agentcraftlab/agentcraft/workflow"
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
	rag,
	a2aAgent,
	autonomous,
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
