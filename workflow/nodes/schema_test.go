package nodes_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/nodes"
)

// configCase is one config of a kind and whether it is valid.
type configCase struct {
	name  string
	cfg   map[string]any
	valid bool
	// key is the config key a problem must name when the case is invalid.
	key string
}

// TestConfigSchemasAgreeWithValidation holds every built-in kind's published
// config schema (GET /api/node-kinds) to the engine's validation: the
// kind's example config passes both, and dropping a required key, setting a
// key to the wrong type, a value outside its enum or below its minimum, or
// adding an unknown key fails both, the engine naming the key. The schema
// is compiled against the draft 2020-12 meta-schema, so it is a real one.
func TestConfigSchemasAgreeWithValidation(t *testing.T) {
	reg := workflow.NewRegistry()
	if err := nodes.RegisterBuiltins(reg); err != nil {
		t.Fatal(err)
	}
	for _, k := range reg.Kinds() {
		t.Run(k.Type, func(t *testing.T) {
			d := k.Describe()
			sch := compileSchema(t, d.ConfigSchema)
			if k.Example == nil {
				t.Fatal("kind has no Example config")
			}
			if len(d.ConfigSchema.Examples) != 1 {
				t.Fatalf("config_schema.examples = %v, want the kind's example", d.ConfigSchema.Examples)
			}
			cases := []configCase{{name: "example", cfg: k.Example, valid: true}}
			// The keys validation requires, read from the kind, not the
			// schema, so a schema that forgot "required" fails below.
			for _, ck := range k.Config {
				if !ck.Required {
					continue
				}
				key := ck.Name
				if _, ok := k.Example[key]; !ok {
					t.Errorf("example lacks required key %q", key)
					continue
				}
				cfg := maps.Clone(k.Example)
				delete(cfg, key)
				cases = append(cases, configCase{name: "without " + key, cfg: cfg, key: key})
			}
			for _, ck := range k.Config {
				cases = append(cases, keyCases(k.Example, ck)...)
			}
			cases = append(cases, configCase{name: "unknown key", cfg: with(k.Example, "no_such_key", "x"), key: "no_such_key"})

			for _, c := range cases {
				schemaErr := sch.Validate(instance(t, c.cfg))
				probs := k.CheckConfig(c.cfg, "config")
				if c.valid {
					if schemaErr != nil {
						t.Errorf("%s: schema rejects %v: %v", c.name, c.cfg, schemaErr)
					}
					if probs != nil {
						t.Errorf("%s: validation rejects %v: %v", c.name, c.cfg, probs)
					}
					continue
				}
				if schemaErr == nil {
					t.Errorf("%s: schema accepts %v, validation does not", c.name, c.cfg)
				}
				if !names(probs, c.key) || strings.HasPrefix(c.name, "without ") && !strings.Contains(probs[0].Message, c.key) {
					t.Errorf("%s: validation problems %v, want one naming %q", c.name, probs, c.key)
				}
			}
		})
	}
}

// keyCases are the valid and invalid variants of the example for one key:
// its default (valid, when it has one), a value of the wrong type, one
// outside its enum and one below its minimum.
func keyCases(example map[string]any, k workflow.ConfigKey) []configCase {
	var out []configCase
	if k.Default != nil {
		out = append(out, configCase{name: k.Name + " at its default", cfg: with(example, k.Name, jsonValue(k.Default)), valid: true})
	}
	if wrong, ok := wrongType(k.Type); ok {
		out = append(out, configCase{name: k.Name + " of the wrong type", cfg: with(example, k.Name, wrong), key: k.Name})
	}
	if len(k.Enum) > 0 {
		out = append(out, configCase{name: k.Name + " outside its enum", cfg: with(example, k.Name, "not-a-choice"), key: k.Name})
	}
	if k.Min != nil {
		out = append(out, configCase{name: k.Name + " below its minimum", cfg: with(example, k.Name, *k.Min-1), key: k.Name})
	}
	return out
}

// wrongType is a JSON value that is not of type t.
func wrongType(t workflow.ValueType) (any, bool) {
	switch t {
	case workflow.TypeAny:
		return nil, false
	case workflow.TypeString, workflow.TypeTemplate, workflow.TypeExpression, workflow.TypeDuration, workflow.TypeRegexp:
		return 12.0, true
	case workflow.TypeInteger:
		return 1.5, true
	case workflow.TypeArray:
		return map[string]any{}, true
	}
	return "text", true // number, boolean, object
}

func with(cfg map[string]any, key string, v any) map[string]any {
	out := maps.Clone(cfg)
	out[key] = v
	return out
}

// jsonValue is v as decoded from JSON (ints become float64), as configs are.
func jsonValue(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}

// names reports whether a problem is about key: its path, which the studio
// attaches the message to, ends in the key or an element of it.
func names(probs []workflow.Problem, key string) bool {
	for _, p := range probs {
		if strings.HasSuffix(p.Path, "."+key) || strings.Contains(p.Path, "."+key+"[") {
			return true
		}
	}
	return false
}

func compileSchema(t *testing.T, s *workflow.Schema) *jsonschema.Schema {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("mem:///config.json", doc); err != nil {
		t.Fatalf("schema %s: %v", b, err)
	}
	sch, err := c.Compile("mem:///config.json")
	if err != nil {
		t.Fatalf("schema %s does not compile: %v", b, err)
	}
	return sch
}

func instance(t *testing.T, cfg map[string]any) any {
	t.Helper()
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestExamplesValidateInAWorkflow puts every kind's example config into a
// workflow start → node → end, its edges leaving by the kind's handles,
// and validates the whole definition: available kinds pass, the
// unavailable one is rejected for being unavailable, not for its config.
func TestExamplesValidateInAWorkflow(t *testing.T) {
	reg := workflow.NewRegistry()
	if err := nodes.RegisterBuiltins(reg); err != nil {
		t.Fatal(err)
	}
	for _, k := range reg.Kinds() {
		t.Run(k.Type, func(t *testing.T) {
			def := &workflow.Definition{Name: "example", Nodes: []workflow.Node{{ID: "start", Type: "start"}}}
			switch k.Type {
			case "start":
				def.Nodes[0].Config = k.Example
				def.Nodes = append(def.Nodes, workflow.Node{ID: "end", Type: "end"})
				def.Edges = []workflow.Edge{{ID: "e0", Source: "start", Target: "end"}}
			case "end":
				def.Nodes = append(def.Nodes, workflow.Node{ID: "end", Type: "end", Config: k.Example})
				def.Edges = []workflow.Edge{{ID: "e0", Source: "start", Target: "end"}}
			default:
				def.Nodes = append(def.Nodes, workflow.Node{ID: "n", Type: k.Type, Config: k.Example}, workflow.Node{ID: "end", Type: "end"})
				def.Edges = []workflow.Edge{{ID: "e0", Source: "start", Target: "n"}}
				handles := []string{""}
				if k.Handles != nil {
					handles = k.Handles(k.Example)
				}
				for i, h := range handles {
					def.Edges = append(def.Edges, workflow.Edge{ID: fmt.Sprintf("e%d", i+1), Source: "n", Target: "end", SourceHandle: h})
				}
			}
			probs := workflow.Validate(def, reg)
			if k.Unavailable != "" {
				if len(probs) != 1 || probs[0].Path != "nodes[1].type" || !strings.Contains(probs[0].Message, "not available") {
					t.Errorf("Validate = %v, want only nodes[1].type not available", probs)
				}
				return
			}
			if probs != nil {
				t.Errorf("Validate = %v, want none", probs)
			}
		})
	}
}

// TestDescribeBuiltins pins what the palette shows and the flags the API
// adds to the engine's: titles, categories, handles, and which kinds wait
// for a person, reach the network, have side effects or loop.
func TestDescribeBuiltins(t *testing.T) {
	reg := workflow.NewRegistry()
	if err := nodes.RegisterBuiltins(reg); err != nil {
		t.Fatal(err)
	}
	type row struct {
		category                      workflow.Category
		handles                       string
		human, network, effects, loop bool
	}
	want := map[string]row{
		"start":        {category: workflow.CategoryFlow},
		"end":          {category: workflow.CategoryFlow},
		"agent":        {category: workflow.CategoryAgents, effects: true},
		"a2a-agent":    {category: workflow.CategoryAgents, network: true, effects: true},
		"autonomous":   {category: workflow.CategoryAgents, effects: true},
		"condition":    {category: workflow.CategoryFlow, handles: "true,false"},
		"loop":         {category: workflow.CategoryFlow, handles: "body,done", loop: true},
		"iteration":    {category: workflow.CategoryFlow, handles: "body,done", loop: true},
		"parallel":     {category: workflow.CategoryFlow},
		"router":       {category: workflow.CategoryFlow, handles: "from routes[].name"},
		"human":        {category: workflow.CategoryHuman, human: true},
		"code":         {category: workflow.CategoryData},
		"rag":          {category: workflow.CategoryData},
		"http-request": {category: workflow.CategoryIntegration, network: true, effects: true},
		"normalize":    {category: workflow.CategoryQuality},
		"contract":     {category: workflow.CategoryQuality},
		"output_check": {category: workflow.CategoryQuality},
		"tool":         {category: workflow.CategoryIntegration, effects: true},
		"approval":     {category: workflow.CategoryHuman, human: true},
		"image":        {category: workflow.CategoryIntegration, effects: true},
	}
	descs := reg.Describe()
	if len(descs) != len(want) {
		t.Errorf("Describe returned %d kinds, want %d", len(descs), len(want))
	}
	for i, d := range descs {
		if i > 0 && descs[i-1].Kind >= d.Kind {
			t.Errorf("kinds not sorted: %q before %q", descs[i-1].Kind, d.Kind)
		}
		handles := strings.Join(d.Handles, ",")
		if d.HandlesFrom != "" {
			handles = "from " + d.HandlesFrom
		}
		got := row{d.Category, handles, d.Flags.HumanInTheLoop, d.Flags.Network, d.Flags.SideEffects, d.Flags.Loops}
		if got != want[d.Kind] {
			t.Errorf("%s: got %+v, want %+v", d.Kind, got, want[d.Kind])
		}
		if d.Title == "" || d.Title == d.Kind { // every built-in sets its own title
			t.Errorf("%s: title %q", d.Kind, d.Title)
		}
		if d.Flags.Available != (d.Unavailable == "") {
			t.Errorf("%s: available %v with unavailable %q", d.Kind, d.Flags.Available, d.Unavailable)
		}
	}
}
