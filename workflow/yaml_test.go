package workflow_test

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/workflow"
)

// TestMarshalYAMLRoundTrip: what MarshalYAML writes is block YAML that
// Parse reads back to the same definition.
func TestMarshalYAMLRoundTrip(t *testing.T) {
	for _, name := range []string{"triage.json", "review-loop.yaml"} {
		src, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		def, err := workflow.Parse(src)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out, err := workflow.MarshalYAML(def)
		if err != nil {
			t.Fatalf("%s: MarshalYAML: %v", name, err)
		}
		if strings.Contains(string(out), "- {") || strings.Contains(string(out), ": [") {
			t.Errorf("%s: MarshalYAML wrote flow style:\n%s", name, out)
		}
		back, err := workflow.Parse(out)
		if err != nil {
			t.Fatalf("%s: the written YAML does not parse: %v\n%s", name, err, out)
		}
		if !reflect.DeepEqual(back, def) {
			t.Errorf("%s: round trip changed the definition:\nwas  %+v\nnow  %+v\nYAML:\n%s", name, def, back, out)
		}
	}
}
