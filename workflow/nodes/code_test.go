package nodes_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/nodes"
	"github.com/agentcraftlab/agentcraft/workflow/transform"
)

// TestDeclaredConfig keeps transform.Runner.Run in step with the code kind in
// package transform: the same modes, every key transform.Runner.Run reads declared there,
// the same script timeout default.
func TestDeclaredConfig(t *testing.T) {
	reg := workflow.NewRegistry()
	if err := nodes.RegisterBuiltins(reg); err != nil {
		t.Fatal(err)
	}
	kind, ok := reg.Lookup("code")
	if !ok {
		t.Fatal("no code kind")
	}
	keys := map[string]workflow.ConfigKey{}
	for _, k := range kind.Config {
		keys[k.Name] = k
	}
	if diff := cmp.Diff(keys["mode"].Enum, transform.ModeNames); diff != "" {
		t.Errorf("modes (-declared +transform):\n%s", diff)
	}
	for _, k := range []string{"mode", "input", "template", "path", "pattern", "replacement", "separator", "operation", "expression", "script", "timeout"} {
		if _, ok := keys[k]; !ok {
			t.Errorf("transform.Runner.Run reads config key %q, which the code kind does not declare", k)
		}
	}
	if len(keys) != 11 {
		t.Errorf("the code kind declares %d keys, transform.Runner.Run reads 11: update Run", len(keys))
	}
	d, err := time.ParseDuration(keys["timeout"].Default.(string))
	if err != nil || d != transform.DefaultTimeout {
		t.Errorf("declared timeout default %v, transform.DefaultTimeout %v", keys["timeout"].Default, transform.DefaultTimeout)
	}
	if keys["input"].Default != "{{input}}" || keys["replacement"].Default != "" {
		t.Errorf("declared defaults changed: input %v, replacement %v", keys["input"].Default, keys["replacement"].Default)
	}
	if diff := cmp.Diff([]string{"trim", "upper", "lower", "title"}, keys["operation"].Enum); diff != "" {
		t.Errorf("text operations (-Run +declared):\n%s", diff)
	}
}
