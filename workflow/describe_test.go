package workflow

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestConfigSchemaShape pins the translation of each key type, and that
// properties keep their declaration order through encoding and decoding.
func TestConfigSchemaShape(t *testing.T) {
	one := 1.0
	keys := []ConfigKey{
		{Name: "who", Type: TypeString, NamesAgent: true, Required: true, Doc: "agent"},
		{Name: "n", Type: TypeInteger, Min: &one, Default: 3, Doc: "count"},
		{Name: "any", Type: TypeAny, Doc: "anything"},
		{Name: "list", Type: TypeArray, Elem: &ConfigKey{Type: TypeDuration, Doc: "wait"}, Doc: "waits"},
		{Name: "obj", Type: TypeObject, Fields: []ConfigKey{{Name: "x", Type: TypeBoolean, Required: true, Default: nil, Doc: "flag"}}, Doc: "nested"},
		{Name: "free", Type: TypeObject, Doc: "open object"},
		{Name: "off", Type: TypeBoolean, Default: false, Doc: "off by default"},
	}
	b, err := json.Marshal(ConfigSchema(keys))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{` +
		`"who":{"type":"string","format":"agent-name","description":"agent"},` +
		`"n":{"type":"integer","description":"count","default":3,"minimum":1},` +
		`"any":{"description":"anything"},` +
		`"list":{"type":"array","description":"waits","items":{"type":"string","format":"go-duration","description":"wait"}},` +
		`"obj":{"type":"object","description":"nested","properties":{"x":{"type":"boolean","description":"flag"}},"required":["x"],"additionalProperties":false},` +
		`"free":{"type":"object","description":"open object"},` +
		`"off":{"type":"boolean","description":"off by default","default":false}},` +
		`"required":["who"],"additionalProperties":false}`
	if diff := cmp.Diff(want, string(b)); diff != "" {
		t.Errorf("schema (-want +got):\n%s", diff)
	}
	var back Schema
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	again, err := json.Marshal(&back)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(b) {
		t.Errorf("decoded and encoded again:\n%s\nwant\n%s", again, b)
	}
}
