package workflow

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Category groups node kinds in the studio's palette.
type Category string

// The categories of node kinds.
const (
	CategoryFlow        Category = "flow"        // start, end, branches, loops, fan-out
	CategoryAgents      Category = "agents"      // model-driven nodes
	CategoryData        Category = "data"        // transforms and retrieval
	CategoryIntegration Category = "integration" // calls to other systems
	CategoryQuality     Category = "quality"     // contracts and output checks
	CategoryHuman       Category = "human"       // a person in the loop
	CategoryOther       Category = "other"       // a kind that names none
)

// The JSON Schema "format" values of config strings that are more than
// text. They are AgentCraft's own names; JSON Schema's "duration" (ISO 8601)
// and "regex" (ECMA 262) mean other syntaxes, so they are not used.
const (
	FormatTemplate   = "template"    // {{...}} references; {{nodes.<id>.output}} must name an ancestor
	FormatExpression = "expression"  // expr-lang/expr, yielding a boolean
	FormatDuration   = "go-duration" // time.ParseDuration, such as "30s"
	FormatRegexp     = "re2"         // Go regexp (RE2) syntax
	FormatAgentName  = "agent-name"  // the name of a workspace agent
)

// KindDescription is a node kind as the API (GET /api/node-kinds) and the
// studio see it. It is computed from the Kind the engine runs and
// validates with, so the two cannot disagree.
type KindDescription struct {
	Kind        string    `json:"kind"`
	Title       string    `json:"title"`
	Description string    `json:"description"`
	Category    Category  `json:"category"`
	Flags       KindFlags `json:"flags"`
	// Unavailable says why the kind cannot run yet; empty when it can.
	Unavailable string `json:"unavailable,omitempty"`
	// Handles are the fixed sourceHandle values outgoing edges must use,
	// such as ["true", "false"]; empty when edges leave without one or the
	// handles come from the config (then HandlesFrom says where).
	Handles     []string `json:"handles,omitempty"`
	HandlesFrom string   `json:"handles_from,omitempty"`
	// Rules are the cross-key rules validation enforces besides the schema.
	Rules []string `json:"rules,omitempty"`
	// ConfigSchema is the JSON Schema (draft 2020-12) of Node.Config, with
	// a valid example config in examples.
	ConfigSchema *Schema `json:"config_schema"`
}

// KindFlags are a kind's flags. The first six are Kind's; the rest say what
// running the node does.
type KindFlags struct {
	// Available: validation accepts the kind and the engine can run it.
	Available          bool `json:"available"`
	Executable         bool `json:"executable"`
	RequiresImperative bool `json:"requires_imperative"`
	AgentLike          bool `json:"agent_like"`
	Meta               bool `json:"meta"`
	Data               bool `json:"data"`
	HumanInTheLoop     bool `json:"human_in_the_loop"`
	Network            bool `json:"network"`
	SideEffects        bool `json:"side_effects"`
	// Loops: the node runs the nodes of its body more than once (loop,
	// iteration), and a cycle may pass through a loop node.
	Loops bool `json:"loops"`
	// Compound is loop, iteration or parallel for kinds that own a body.
	Compound string `json:"compound,omitempty"`
}

// Describe returns every registered kind's description, sorted by kind.
func (r *Registry) Describe() []KindDescription {
	kinds := r.Kinds()
	out := make([]KindDescription, 0, len(kinds))
	for _, k := range kinds {
		out = append(out, k.Describe())
	}
	return out
}

// Describe returns the kind's description.
func (k Kind) Describe() KindDescription {
	d := KindDescription{
		Kind:        k.Type,
		Title:       k.Title,
		Description: k.Doc,
		Category:    k.Category,
		Unavailable: k.Unavailable,
		HandlesFrom: k.HandlesFrom,
		Rules:       k.Rules,
		Flags: KindFlags{
			Available:          k.Unavailable == "",
			Executable:         k.IsExecutable,
			RequiresImperative: k.RequiresImperative,
			AgentLike:          k.IsAgentLike,
			Meta:               k.IsMeta,
			Data:               k.IsDataNode,
			HumanInTheLoop:     k.WaitsForHuman,
			Network:            k.Network,
			SideEffects:        k.SideEffects,
			Loops:              k.Compound == CompoundLoop || k.Compound == CompoundIteration,
			Compound:           k.Compound,
		},
		ConfigSchema: ConfigSchema(k.Config),
	}
	if d.Title == "" {
		d.Title = k.Type
	}
	if d.Category == "" {
		d.Category = CategoryOther
	}
	if k.Handles != nil && k.HandlesFrom == "" {
		d.Handles = k.Handles(map[string]any{})
	}
	if k.Example != nil {
		d.ConfigSchema.Examples = []any{k.Example}
	}
	return d
}

// Schema is the subset of JSON Schema (draft 2020-12) that config keys
// translate to. Properties encode in declaration order, which is the order
// a form shows them in.
type Schema struct {
	Schema      string `json:"$schema,omitempty"`
	Type        string `json:"type,omitempty"`
	Format      string `json:"format,omitempty"`
	Description string `json:"description,omitempty"`
	// Default is the value the executor uses when the key is absent.
	// Validation does not fill it in.
	Default              any        `json:"default,omitempty"`
	Enum                 []string   `json:"enum,omitempty"`
	Minimum              *float64   `json:"minimum,omitempty"`
	Items                *Schema    `json:"items,omitempty"`
	Properties           Properties `json:"properties,omitempty"`
	Required             []string   `json:"required,omitempty"`
	AdditionalProperties *bool      `json:"additionalProperties,omitempty"`
	Examples             []any      `json:"examples,omitempty"`
}

// Property is one named property of an object schema.
type Property struct {
	Name   string
	Schema *Schema
}

// Properties are an object schema's properties, in order. They encode as a
// JSON object whose keys keep that order.
type Properties []Property

// MarshalJSON implements json.Marshaler.
func (ps Properties) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(',')
		}
		name, err := json.Marshal(p.Name)
		if err != nil {
			return nil, err
		}
		sch, err := json.Marshal(p.Schema)
		if err != nil {
			return nil, fmt.Errorf("property %s: %w", p.Name, err)
		}
		b.Write(name)
		b.WriteByte(':')
		b.Write(sch)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON implements json.Unmarshaler, keeping the keys' order.
func (ps *Properties) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("properties: want a JSON object")
	}
	*ps = nil
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return fmt.Errorf("properties: %w", err)
		}
		name, _ := t.(string)
		var s Schema
		if err := dec.Decode(&s); err != nil {
			return fmt.Errorf("properties: %s: %w", name, err)
		}
		*ps = append(*ps, Property{Name: name, Schema: &s})
	}
	return nil
}

// ConfigSchema translates config keys into the JSON Schema of a node's
// config: an object with exactly those keys (unknown keys are an error, as
// in validation). Every check of a key's value that JSON Schema can state
// is in it: type, required, enum, minimum, array elements and object
// fields. What it cannot state (an expression that does not compile, a
// template naming a node that does not run before) validation still
// reports, as do a kind's cross-key rules (Kind.Rules).
func ConfigSchema(keys []ConfigKey) *Schema {
	s := objectSchema(keys)
	s.Schema = "https://json-schema.org/draft/2020-12/schema"
	return s
}

func objectSchema(keys []ConfigKey) *Schema {
	closed := false
	s := &Schema{Type: "object", AdditionalProperties: &closed, Properties: Properties{}}
	for _, k := range keys {
		s.Properties = append(s.Properties, Property{Name: k.Name, Schema: keySchema(k)})
		if k.Required {
			s.Required = append(s.Required, k.Name)
		}
	}
	return s
}

func keySchema(k ConfigKey) *Schema {
	var s *Schema
	switch k.Type {
	case TypeObject:
		if k.Fields != nil {
			s = objectSchema(k.Fields)
		} else {
			s = &Schema{Type: "object"}
		}
	case TypeArray:
		s = &Schema{Type: "array"}
		if k.Elem != nil {
			s.Items = keySchema(*k.Elem)
		}
	case TypeAny:
		s = &Schema{}
	case TypeString, TypeTemplate, TypeExpression, TypeDuration, TypeRegexp:
		s = &Schema{Type: "string", Format: stringFormat(k)}
		s.Enum = k.Enum
	default: // number, integer, boolean
		s = &Schema{Type: string(k.Type), Minimum: k.Min}
	}
	s.Description = k.Doc
	s.Default = k.Default
	return s
}

func stringFormat(k ConfigKey) string {
	switch k.Type {
	case TypeTemplate:
		return FormatTemplate
	case TypeExpression:
		return FormatExpression
	case TypeDuration:
		return FormatDuration
	case TypeRegexp:
		return FormatRegexp
	}
	if k.NamesAgent {
		return FormatAgentName
	}
	return ""
}
