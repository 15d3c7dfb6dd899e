package nodes_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/nodes"
)

type flags struct {
	Executable, Imperative, AgentLike, Meta, Data, Available bool
}

// TestBuiltinFlags pins every built-in kind's flags to the table of issue 3:
// strategy detection reads them, so a changed flag changes how workflows run.
func TestBuiltinFlags(t *testing.T) {
	want := map[string]flags{
		"agent":        {Executable: true, AgentLike: true, Available: true},
		"a2a-agent":    {Executable: true, Imperative: true, AgentLike: true, Available: true},
		"autonomous":   {Executable: true, Imperative: true, AgentLike: true, Available: true},
		"condition":    {Executable: true, Imperative: true, Available: true},
		"loop":         {Executable: true, Imperative: true, Available: true},
		"router":       {Executable: true, Imperative: true, Available: true},
		"human":        {Executable: true, Imperative: true, Available: true},
		"code":         {Executable: true, Imperative: true, Available: true},
		"iteration":    {Executable: true, Imperative: true, Available: true},
		"parallel":     {Executable: true, Imperative: true, Available: true},
		"http-request": {Executable: true, Imperative: true, Available: true},
		"start":        {Meta: true, Available: true},
		"end":          {Meta: true, Available: true},
		"rag":          {Executable: true, Data: true, Available: true},
		"normalize":    {Executable: true, Available: true},
		"contract":     {Executable: true, Available: true},
		"output_check": {Executable: true, Available: true},
		"tool":         {Executable: true, Imperative: true, Available: true},
		"approval":     {Executable: true, Imperative: true, Available: true},
		"image":        {Executable: true, Available: true},
	}
	reg := workflow.NewRegistry()
	if err := nodes.RegisterBuiltins(reg); err != nil {
		t.Fatal(err)
	}
	got := map[string]flags{}
	for _, k := range reg.Kinds() {
		got[k.Type] = flags{k.IsExecutable, k.RequiresImperative, k.IsAgentLike, k.IsMeta, k.IsDataNode, k.Unavailable == ""}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kind flags (-want +got):\n%s", diff)
	}
}

// TestBuiltinConfigDescribed keeps the config descriptions usable by the
// studio: every kind and key has a doc line and a known type, and required
// keys have no default (a default would make them optional).
func TestBuiltinConfigDescribed(t *testing.T) {
	reg := workflow.NewRegistry()
	if err := nodes.RegisterBuiltins(reg); err != nil {
		t.Fatal(err)
	}
	types := map[workflow.ValueType]bool{}
	for _, ty := range []workflow.ValueType{workflow.TypeString, workflow.TypeTemplate, workflow.TypeExpression, workflow.TypeDuration, workflow.TypeRegexp, workflow.TypeNumber, workflow.TypeInteger, workflow.TypeBoolean, workflow.TypeObject, workflow.TypeArray, workflow.TypeAny} {
		types[ty] = true
	}
	var check func(kind, path string, k workflow.ConfigKey)
	check = func(kind, path string, k workflow.ConfigKey) {
		if k.Doc == "" || !types[k.Type] || (k.Required && k.Default != nil) {
			t.Errorf("%s: %s: doc %q, type %q, required %v with default %v", kind, path, k.Doc, k.Type, k.Required, k.Default)
		}
		for _, f := range k.Fields {
			check(kind, path+"."+f.Name, f)
		}
		if k.Elem != nil {
			check(kind, path+"[]", *k.Elem)
		}
	}
	for _, kind := range reg.Kinds() {
		if kind.Doc == "" {
			t.Errorf("%s: no doc line", kind.Type)
		}
		for _, k := range kind.Config {
			check(kind.Type, k.Name, k)
		}
	}
}

func TestRegisterBuiltinsTwice(t *testing.T) {
	reg := workflow.NewRegistry()
	if err := nodes.RegisterBuiltins(reg); err != nil {
		t.Fatal(err)
	}
	if err := nodes.RegisterBuiltins(reg); err == nil {
		t.Error("registering the built-ins twice: want an error, got nil")
	}
}

// TestCheckAgents: an agent node naming an agent the workspace lacks is
// reported with the node's config path and the name; named agents that
// exist and inline agents pass.
func TestCheckAgents(t *testing.T) {
	reg := workflow.NewRegistry()
	if err := nodes.RegisterBuiltins(reg); err != nil {
		t.Fatal(err)
	}
	def, err := workflow.Parse([]byte(`{"name":"w","nodes":[
	  {"id":"start","type":"start"},
	  {"id":"a","type":"agent","config":{"agent":"writer"}},
	  {"id":"b","type":"agent","config":{"agent":"writr"}},
	  {"id":"c","type":"agent","config":{"model":"m"}},
	  {"id":"end","type":"end"}],
	"edges":[{"id":"e1","source":"start","target":"a"},{"id":"e2","source":"a","target":"b"},{"id":"e3","source":"b","target":"c"},{"id":"e4","source":"c","target":"end"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if probs := workflow.Validate(def, reg); probs != nil {
		t.Fatalf("Validate: %v", probs)
	}
	want := []workflow.Problem{{Path: "nodes[2].config.agent", Message: `unknown agent "writr"`, Hint: "use one of: reviewer, writer"}}
	if diff := cmp.Diff(want, workflow.CheckAgents(def, reg, []string{"writer", "reviewer"})); diff != "" {
		t.Errorf("CheckAgents (-want +got):\n%s", diff)
	}
	if probs := workflow.CheckAgents(def, reg, []string{"writer", "writr"}); probs != nil {
		t.Errorf("CheckAgents with every agent known = %v, want none", probs)
	}
	if probs := workflow.CheckAgents(def, reg, nil); len(probs) != 2 || !strings.Contains(probs[0].Hint, "no agents") {
		t.Errorf("CheckAgents with no agents = %v, want both named agents reported", probs)
	}
}
