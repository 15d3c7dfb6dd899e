package workflow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"
)

// MaxDefinitionSize is the largest definition [Parse] accepts, in bytes. A
// workflow of a few hundred nodes is well under it; the limit keeps a hostile
// upload from costing memory and CPU in the parser and validator.
const MaxDefinitionSize = 1 << 20

// ErrTooLarge is returned by [Parse] for input over [MaxDefinitionSize].
var ErrTooLarge = errors.New("workflow: definition larger than 1 MiB")

// Definition is a workflow as the studio draws it: React Flow's nodes and
// edges plus settings. Field names in JSON and YAML are exactly React Flow's
// (sourceHandle, not source_handle) so the studio maps one to one.
type Definition struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Version is the author's label for this revision. JSON and YAML may
	// give it as a string or a number (version: 2 becomes "2").
	Version string `json:"version,omitempty"`
	Nodes   []Node `json:"nodes"`
	Edges   []Edge `json:"edges"`
	// Hooks is carried verbatim; it is interpreted and validated by the
	// hooks work (issue 3, item 6), not by this layer.
	Hooks    json.RawMessage `json:"hooks,omitempty"`
	Settings Settings        `json:"settings,omitzero"`
}

// Node is one step of a workflow. Type names a kind in the [Registry];
// Config is checked against that kind's [ConfigKey] descriptions.
type Node struct {
	ID     string         `json:"id"`
	Type   string         `json:"type"`
	Name   string         `json:"name,omitempty"`
	Config map[string]any `json:"config,omitempty"`
	// Position is the studio's layout; the engine ignores it, but keeping
	// it lets a definition round-trip through the studio unchanged.
	Position *Position `json:"position,omitempty"`
}

// Position is a node's place on the studio canvas.
type Position struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// Edge connects two nodes. SourceHandle names the output of a branching node
// the edge leaves by: "true"/"false" for a condition, a route name for a
// router, "body"/"done" for a loop.
type Edge struct {
	ID           string `json:"id"`
	Source       string `json:"source"`
	Target       string `json:"target"`
	SourceHandle string `json:"sourceHandle,omitempty"`
}

// Settings tune how a workflow runs.
type Settings struct {
	// Strategy is the engine strategy; empty means [StrategyAuto].
	Strategy Strategy `json:"strategy,omitempty"`
	// Timeout bounds a whole run; zero means the server's default. In JSON
	// and YAML it is a Go duration string such as "90s" or "5m".
	Timeout time.Duration `json:"timeout,omitempty"`
	// MaxSteps bounds the node executions of a run, loops included; zero
	// means the server's default.
	MaxSteps int `json:"max_steps,omitempty"`
}

// UnmarshalJSON accepts the version as a string or a number.
func (d *Definition) UnmarshalJSON(b []byte) error {
	var aux struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Version     json.RawMessage `json:"version"`
		Nodes       []Node          `json:"nodes"`
		Edges       []Edge          `json:"edges"`
		Hooks       json.RawMessage `json:"hooks"`
		Settings    Settings        `json:"settings"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	*d = Definition{Name: aux.Name, Description: aux.Description, Nodes: aux.Nodes, Edges: aux.Edges, Hooks: aux.Hooks, Settings: aux.Settings}
	if string(aux.Hooks) == "null" {
		d.Hooks = nil
	}
	v := bytes.TrimSpace(aux.Version)
	switch {
	case len(v) == 0 || string(v) == "null":
	case v[0] == '"':
		if err := json.Unmarshal(v, &d.Version); err != nil {
			return fmt.Errorf("version: %w", err)
		}
	case v[0] == '-' || (v[0] >= '0' && v[0] <= '9'):
		d.Version = string(v)
	default:
		return errors.New("version: want a string or a number, such as \"1.2\" or 3")
	}
	return nil
}

// UnmarshalJSON accepts ids as strings or numbers: React Flow's ids are
// strings, but YAML authors write id: 1.
func (n *Node) UnmarshalJSON(b []byte) error {
	var aux struct {
		ID       scalar         `json:"id"`
		Type     string         `json:"type"`
		Name     string         `json:"name"`
		Config   map[string]any `json:"config"`
		Position *Position      `json:"position"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	*n = Node{ID: string(aux.ID), Type: aux.Type, Name: aux.Name, Config: aux.Config, Position: aux.Position}
	return nil
}

// UnmarshalJSON accepts ids and handles as strings, numbers or booleans, so
// that YAML's sourceHandle: true (a boolean) means the handle "true".
func (e *Edge) UnmarshalJSON(b []byte) error {
	var aux struct {
		ID           scalar `json:"id"`
		Source       scalar `json:"source"`
		Target       scalar `json:"target"`
		SourceHandle scalar `json:"sourceHandle"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	*e = Edge{ID: string(aux.ID), Source: string(aux.Source), Target: string(aux.Target), SourceHandle: string(aux.SourceHandle)}
	return nil
}

// scalar is a string that may be written as a number or boolean too.
type scalar string

func (s *scalar) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || string(b) == "null":
		*s = ""
	case b[0] == '"':
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return err
		}
		*s = scalar(str)
	case b[0] == '{' || b[0] == '[':
		value := "object"
		if b[0] == '[' {
			value = "array"
		}
		return &json.UnmarshalTypeError{Value: value, Type: reflect.TypeFor[string]()}
	default:
		*s = scalar(b) // a number or true/false, as written
	}
	return nil
}

// UnmarshalJSON reads timeout as a duration string.
func (s *Settings) UnmarshalJSON(b []byte) error {
	var aux struct {
		Strategy Strategy        `json:"strategy"`
		Timeout  json.RawMessage `json:"timeout"`
		MaxSteps int             `json:"max_steps"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	*s = Settings{Strategy: aux.Strategy, MaxSteps: aux.MaxSteps}
	t := bytes.TrimSpace(aux.Timeout)
	if len(t) == 0 || string(t) == "null" {
		return nil
	}
	var str string
	if err := json.Unmarshal(t, &str); err != nil {
		return errors.New("settings.timeout: want a duration string such as \"90s\" or \"5m\"")
	}
	d, err := time.ParseDuration(str)
	if err != nil {
		return fmt.Errorf("settings.timeout: %q is not a duration; write it like \"90s\" or \"5m\"", str)
	}
	s.Timeout = d
	return nil
}

// MarshalJSON writes timeout as a duration string, the form UnmarshalJSON reads.
func (s Settings) MarshalJSON() ([]byte, error) {
	aux := struct {
		Strategy Strategy `json:"strategy,omitempty"`
		Timeout  string   `json:"timeout,omitempty"`
		MaxSteps int      `json:"max_steps,omitempty"`
	}{Strategy: s.Strategy, MaxSteps: s.MaxSteps}
	if s.Timeout != 0 {
		aux.Timeout = s.Timeout.String()
	}
	return json.Marshal(aux)
}

// Parse decodes a definition from JSON or YAML. Input whose first non-blank
// character is '{' is JSON; anything else is YAML, converted to JSON first so
// both formats use the same field names. Parse checks only the shape of the
// data; call [Validate] for everything else.
func Parse(data []byte) (*Definition, error) {
	if len(data) > MaxDefinitionSize {
		return nil, ErrTooLarge
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, errors.New("workflow: parse: empty definition")
	}
	if trimmed[0] == '{' {
		return parseJSON(trimmed, "json")
	}
	var doc any
	if err := yaml.Unmarshal(trimmed, &doc); err != nil {
		return nil, fmt.Errorf("workflow: parse yaml: %w", err)
	}
	doc, err := jsonable(doc, "")
	if err != nil {
		return nil, fmt.Errorf("workflow: parse yaml: %w", err)
	}
	if _, ok := doc.(map[string]any); !ok {
		return nil, fmt.Errorf("workflow: parse yaml: the document is a %s; want a mapping with name, nodes and edges", kindOf(doc))
	}
	j, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("workflow: parse yaml: %w", err)
	}
	return parseJSON(j, "yaml")
}

// parseJSON decodes JSON; format names the author's format in errors.
func parseJSON(data []byte, format string) (*Definition, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var def Definition
	if err := dec.Decode(&def); err != nil {
		return nil, jsonError(data, format, err)
	}
	if off := dec.InputOffset(); len(bytes.TrimSpace(data[off:])) > 0 {
		off += int64(len(data[off:]) - len(bytes.TrimLeft(data[off:], " \t\r\n")))
		line, col := lineCol(data, off+1)
		return nil, fmt.Errorf("workflow: parse json: line %d, column %d: unexpected data after the definition", line, col)
	}
	return &def, nil
}

// jsonError names where and what went wrong, so the author can find it.
func jsonError(data []byte, format string, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		// Offset counts the bytes read, the offending one included.
		line, col := lineCol(data, syn.Offset)
		return fmt.Errorf("workflow: parse json: line %d, column %d: %w", line, col, err)
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			field = "the definition"
		}
		want := "another type"
		if typ.Type != nil {
			want = jsonType(typ.Type.Kind().String())
		}
		return fmt.Errorf("workflow: parse %s: %s: got %s, want %s", format, field, jsonValue(typ.Value), want)
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("workflow: parse json: the definition ends early; check for a missing } or ]")
	}
	return fmt.Errorf("workflow: parse %s: %w", format, err)
}

func jsonValue(v string) string {
	switch v {
	case "array":
		return "a list"
	case "object":
		return "an object"
	case "bool":
		return "a boolean"
	case "string", "number":
		return "a " + v
	}
	return v
}

func jsonType(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "slice":
		return "a list"
	case "map", "struct", "ptr":
		return "an object"
	case "bool":
		return "true or false"
	case "int", "int64", "float64":
		return "a number"
	}
	return goKind
}

// lineCol returns the 1-based line and column of the off-th byte (1-based).
func lineCol(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	if off < 1 {
		off = 1
	}
	before := data[:off-1] // the bytes before the one at off
	line = 1 + bytes.Count(before, []byte("\n"))
	col = len(before) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// jsonable turns a decoded YAML tree into one encoding/json can marshal:
// mapping keys become strings, and values JSON cannot represent are refused
// with their path instead of failing later without one.
func jsonable(v any, path string) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			c, err := jsonable(e, join(path, k))
			if err != nil {
				return nil, err
			}
			x[k] = c
		}
		return x, nil
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			ks := fmt.Sprint(k)
			c, err := jsonable(e, join(path, ks))
			if err != nil {
				return nil, err
			}
			m[ks] = c
		}
		return m, nil
	case []any:
		for i, e := range x {
			c, err := jsonable(e, path+"["+strconv.Itoa(i)+"]")
			if err != nil {
				return nil, err
			}
			x[i] = c
		}
		return x, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%s: %v is not a JSON number", orRoot(path), x)
		}
	case time.Time:
		// YAML reads 2026-01-02 as a timestamp; keep what the author wrote.
		return x.Format(time.RFC3339Nano), nil
	}
	return v, nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func orRoot(path string) string {
	if path == "" {
		return "the document"
	}
	return path
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case []any:
		return "list"
	case map[string]any:
		return "mapping"
	case bool:
		return "boolean"
	}
	return "number"
}
