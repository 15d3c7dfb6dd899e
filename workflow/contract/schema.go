package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaURL is the in-memory address of a contract's schema. Only it exists:
// every other $ref target fails, so compiling never reads a file or the
// network.
const schemaURL = "mem:///contract.json"

// Schema is a compiled JSON Schema. Compile it once per contract node and
// reuse it; it is immutable and safe for concurrent use.
type Schema struct {
	compiled *jsonschema.Schema
}

// Compile compiles a JSON Schema. Schemas without "$schema" are read as
// draft 2020-12. References must stay inside the schema ("#/$defs/x");
// remote references are an error, as is anything the draft's meta-schema
// rejects. The returned error names the offending keyword.
func Compile(schema map[string]any) (*Schema, error) {
	if schema == nil {
		return nil, errors.New("contract: compile schema: schema is required; give a JSON Schema object such as {\"type\":\"object\"}")
	}
	// Re-decode the schema from its JSON text: the compiler expects the
	// value types of encoding/json (json.Number), while callers may pass
	// ints from YAML or Go literals. This also decouples the compiled
	// schema from the caller's map.
	b, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("contract: compile schema: encode: %w", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("contract: compile schema: decode: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("contract: compile schema: %w", err)
	}
	compiled, err := c.Compile(schemaURL)
	if err != nil {
		return nil, fmt.Errorf("contract: compile schema: %w", err)
	}
	return &Schema{compiled: compiled}, nil
}

type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("remote reference %q: contracts resolve only references inside the schema (#/$defs/...)", url)
}

// maxRefDepth bounds how many $ref and allOf hops the repair walk follows,
// so a schema that refers to itself cannot loop.
const maxRefDepth = 16

// The helpers below read the compiled schema for the repair walk. They
// follow $ref and allOf, which is how schemas share object shapes; they do
// not look into anyOf/oneOf, where a repair would have to guess the branch.

// types returns the JSON types a schema allows, or nil if it does not say.
func types(sch *jsonschema.Schema) []string {
	var out []string
	visit(sch, func(s *jsonschema.Schema) {
		if s.Types != nil {
			for _, t := range s.Types.ToStrings() {
				if !slices.Contains(out, t) {
					out = append(out, t)
				}
			}
		}
	})
	return out
}

// required returns the fields an object schema requires, in schema order.
func required(sch *jsonschema.Schema) []string {
	var out []string
	visit(sch, func(s *jsonschema.Schema) {
		for _, r := range s.Required {
			if !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	})
	return out
}

// property returns the schema of an object's property, or nil.
func property(sch *jsonschema.Schema, name string) *jsonschema.Schema {
	var out *jsonschema.Schema
	visit(sch, func(s *jsonschema.Schema) {
		if p, ok := s.Properties[name]; ok && out == nil {
			out = p
		}
	})
	return out
}

// properties returns the declared property names, sorted.
func properties(sch *jsonschema.Schema) []string {
	var out []string
	visit(sch, func(s *jsonschema.Schema) {
		for name := range s.Properties {
			if !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	})
	slices.Sort(out)
	return out
}

// items returns the schema every array item must match, or nil (also for
// tuple schemas, where one item schema does not fit every position).
func items(sch *jsonschema.Schema) *jsonschema.Schema {
	var out *jsonschema.Schema
	visit(sch, func(s *jsonschema.Schema) {
		if out != nil {
			return
		}
		if s.Items2020 != nil && len(s.PrefixItems) == 0 {
			out = s.Items2020
		} else if it, ok := s.Items.(*jsonschema.Schema); ok {
			out = it
		}
	})
	return out
}

// title returns the schema's title.
func title(sch *jsonschema.Schema) string {
	var out string
	visit(sch, func(s *jsonschema.Schema) {
		if out == "" {
			out = s.Title
		}
	})
	return out
}

// visit calls fn on sch and on every schema reachable from it through $ref
// and allOf, depth first, each at most once.
func visit(sch *jsonschema.Schema, fn func(*jsonschema.Schema)) {
	var seen []*jsonschema.Schema
	var walk func(s *jsonschema.Schema, depth int)
	walk = func(s *jsonschema.Schema, depth int) {
		if s == nil || depth > maxRefDepth || slices.Contains(seen, s) {
			return
		}
		seen = append(seen, s)
		fn(s)
		walk(s.Ref, depth+1)
		for _, a := range s.AllOf {
			walk(a, depth+1)
		}
	}
	walk(sch, 0)
}

// allows reports whether a value of JSON type got matches the schema types
// (nil types allow everything). "integer" accepts integral numbers only.
func allows(ts []string, v any) bool {
	if ts == nil {
		return true
	}
	got := jsonType(v)
	for _, t := range ts {
		if t == got || (t == "integer" && got == "number" && isInteger(v)) {
			return true
		}
	}
	return false
}
