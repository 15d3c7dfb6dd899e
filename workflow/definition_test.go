package workflow_test

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/workflow"
)

func TestParseYAMLAndJSONAgree(t *testing.T) {
	yamlSrc := `
name: triage
version: 3
settings: {strategy: handoff, timeout: 90s, max_steps: 12}
nodes:
  - id: start
    type: start
    position: {x: 10, y: 20}
  - id: c
    type: condition
    name: Long?
    config: {expression: "len(input) > 10", note: [1, 2.5, true, null]}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: c}
  - {id: e2, source: c, target: end, sourceHandle: true}
`
	jsonSrc := `{
  "name": "triage", "version": "3",
  "settings": {"strategy": "handoff", "timeout": "1m30s", "max_steps": 12},
  "nodes": [
    {"id": "start", "type": "start", "position": {"x": 10, "y": 20}},
    {"id": "c", "type": "condition", "name": "Long?", "config": {"expression": "len(input) > 10", "note": [1, 2.5, true, null]}},
    {"id": "end", "type": "end"}
  ],
  "edges": [
    {"id": "e1", "source": "start", "target": "c"},
    {"id": "e2", "source": "c", "target": "end", "sourceHandle": "true"}
  ]
}`
	fromYAML := mustParse(t, yamlSrc)
	fromJSON := mustParse(t, jsonSrc)
	if diff := cmp.Diff(fromJSON, fromYAML); diff != "" {
		t.Errorf("YAML and JSON differ (-json +yaml):\n%s", diff)
	}
	want := workflow.Settings{Strategy: workflow.StrategyHandoff, Timeout: 90 * time.Second, MaxSteps: 12}
	if diff := cmp.Diff(want, fromYAML.Settings); diff != "" {
		t.Errorf("settings (-want +got):\n%s", diff)
	}
	if fromYAML.Version != "3" || fromYAML.Edges[1].SourceHandle != "true" || fromYAML.Nodes[0].Position == nil {
		t.Errorf("version %q, sourceHandle %q, position %v", fromYAML.Version, fromYAML.Edges[1].SourceHandle, fromYAML.Nodes[0].Position)
	}
}

// TestParseRoundTrip checks that what the API would store (json.Marshal of a
// Definition) parses back to the same definition, React Flow names included.
func TestParseRoundTrip(t *testing.T) {
	data, err := os.ReadFile("testdata/review-loop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	def := mustParse(t, string(data))
	out, err := json.Marshal(def)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"sourceHandle":"body"`) || !strings.Contains(string(out), `"timeout":"5m0s"`) {
		t.Errorf("marshalled JSON lacks React Flow or duration fields: %s", out)
	}
	if diff := cmp.Diff(def, mustParse(t, string(out))); diff != "" {
		t.Errorf("round trip (-before +after):\n%s", diff)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"empty", "  \n", "empty definition"},
		{"json syntax", "{\n  \"name\": \"t\",\n  \"nodes\": [}\n", "line 3, column 13"},
		{"json truncated", `{"name": "t", "nodes": [`, "ends early"},
		{"json wrong type", `{"name": "t", "nodes": "start"}`, "nodes: got a string, want a list"},
		{"json wrong field type", `{"name": "t", "nodes": [{"id": [7]}]}`, "nodes.id: got a list, want a string"},
		{"yaml wrong field type", "name: t\nedges:\n  - {id: e1, source: {id: a}}\n", "parse yaml: edges.source: got an object, want a string"},
		{"yaml wrong settings type", "name: t\nsettings: {max_steps: many}\n", "parse yaml: settings.max_steps: got a string, want a number"},
		{"json trailing data", "{\"name\": \"t\"}\n {\"name\": \"u\"}", "line 2, column 2: unexpected data after the definition"},
		{"yaml syntax", "name: t\nnodes: [\n", "parse yaml"},
		{"yaml list", "- a\n- b\n", "the document is a list"},
		{"yaml scalar", "just words", "the document is a string"},
		{"yaml nan", "name: t\nnodes:\n  - {id: a, type: agent, config: {temperature: .nan}}\n", "nodes[0].config.temperature: NaN is not a JSON number"},
		{"bad timeout", `{"name": "t", "settings": {"timeout": "soon"}}`, `settings.timeout: "soon" is not a duration`},
		{"numeric timeout", `{"name": "t", "settings": {"timeout": 30}}`, "settings.timeout: want a duration string"},
		{"bad version", `{"name": "t", "version": [1]}`, "version: want a string or a number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			def, err := workflow.Parse([]byte(tt.src))
			if err == nil {
				t.Fatalf("got %+v, want an error containing %q", def, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "workflow: parse") {
				t.Errorf("got %q, want a workflow: parse error containing %q", err, tt.want)
			}
		})
	}
}

func TestParseSizeLimit(t *testing.T) {
	big := `{"name": "` + strings.Repeat("x", workflow.MaxDefinitionSize) + `"}`
	if _, err := workflow.Parse([]byte(big)); !errors.Is(err, workflow.ErrTooLarge) {
		t.Errorf("got %v, want ErrTooLarge", err)
	}
	justUnder := `{"name": "` + strings.Repeat("x", workflow.MaxDefinitionSize-20) + `"}`
	if _, err := workflow.Parse([]byte(justUnder)); err != nil {
		t.Errorf("definition under the limit: %v", err)
	}
}
