package workflow_test

import (
	"testing"

	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/nodes"
)

func builtins(t testing.TB) *workflow.Registry {
	t.Helper()
	reg := workflow.NewRegistry()
	if err := nodes.RegisterBuiltins(reg); err != nil {
		t.Fatal(err)
	}
	return reg
}

// withUnavailable adds a kind whose executor does not exist yet, as
// autonomous was before its executor landed, so that validation's refusal
// of such kinds stays tested.
func withUnavailable(t testing.TB, reg *workflow.Registry) *workflow.Registry {
	t.Helper()
	if err := reg.Register(workflow.Kind{Type: "teleport", Title: "Teleport", Category: workflow.CategoryFlow, Doc: "Not yet.",
		IsExecutable: true, Unavailable: "teleporting arrives later"}); err != nil {
		t.Fatal(err)
	}
	return reg
}

func mustParse(t testing.TB, src string) *workflow.Definition {
	t.Helper()
	def, err := workflow.Parse([]byte(src))
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, src)
	}
	return def
}

func paths(probs []workflow.Problem) []string {
	out := []string{}
	for _, p := range probs {
		out = append(out, p.Path)
	}
	return out
}
