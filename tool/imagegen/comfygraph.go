package imagegen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// The placeholders of a ComfyUI workflow (see the package documentation).
const (
	phPrompt   = "prompt"
	phNegative = "negative_prompt"
	phSeed     = "seed"
	phWidth    = "width"
	phHeight   = "height"
	phBatch    = "batch_size"
)

var placeholders = []string{phPrompt, phNegative, phSeed, phWidth, phHeight, phBatch}

// placeholderRE finds {{name}} with optional spaces inside the braces;
// wholeRE matches a value that is exactly one.
var (
	placeholderRE = regexp.MustCompile(`\{\{\s*([A-Za-z0-9_]+)\s*\}\}`)
	wholeRE       = regexp.MustCompile(`^\{\{\s*([A-Za-z0-9_]+)\s*\}\}$`)
)

// graph is an operator's ComfyUI workflow in API format, checked, with the
// placeholders it uses. It is decoded afresh for every request, so
// requests never share (or race on) its maps.
type graph struct {
	raw  []byte
	uses map[string]bool
}

// parseGraph checks an API-format workflow: a non-empty object of node id
// → {"class_type": string, "inputs": object}, whose placeholders are all
// known, {{prompt}} among them.
func parseGraph(data []byte) (*graph, error) {
	nodes, err := decodeGraph(data)
	if err != nil {
		return nil, err
	}
	if _, ui := nodes["nodes"]; ui {
		if _, links := nodes["links"]; links {
			return nil, errors.New(`this is a workflow in ComfyUI's UI format ("nodes" and "links"): export it with Workflow → Export (API) instead`)
		}
	}
	if len(nodes) == 0 {
		return nil, errors.New("the workflow has no nodes")
	}
	g := &graph{raw: bytes.Clone(data), uses: map[string]bool{}}
	for _, id := range sortedIDs(nodes) {
		inputs, err := nodeInputs(id, nodes[id])
		if err != nil {
			return nil, err
		}
		for _, name := range slices.Sorted(maps.Keys(inputs)) {
			if err := g.scan(inputs[name], fmt.Sprintf("node %s input %q", id, name)); err != nil {
				return nil, err
			}
		}
	}
	if !g.uses[phPrompt] {
		return nil, errors.New(`the workflow has no {{prompt}} placeholder: put "{{prompt}}" in the text input of the positive prompt's CLIPTextEncode node`)
	}
	return g, nil
}

// decodeGraph decodes a workflow keeping numbers as written (a seed above
// 2^53 would not survive float64).
func decodeGraph(data []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var nodes map[string]any
	if err := dec.Decode(&nodes); err != nil {
		return nil, fmt.Errorf("the workflow is not a JSON object of nodes: %w", err)
	}
	if dec.More() {
		return nil, errors.New("the workflow has more than one JSON value")
	}
	return nodes, nil
}

// nodeInputs returns a node's inputs, checking its shape.
func nodeInputs(id string, v any) (map[string]any, error) {
	node, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf(`node %s is not an object with "class_type" and "inputs"`, id)
	}
	if ct, _ := node["class_type"].(string); ct == "" {
		return nil, fmt.Errorf(`node %s has no "class_type": is this an API-format export?`, id)
	}
	inputs, ok := node["inputs"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf(`node %s has no "inputs" object`, id)
	}
	return inputs, nil
}

// scan records the placeholders in v (a string, or lists and objects of
// them) and refuses unknown or malformed ones.
func (g *graph) scan(v any, at string) error {
	switch t := v.(type) {
	case string:
		for _, m := range placeholderRE.FindAllStringSubmatch(t, -1) {
			if !slices.Contains(placeholders, m[1]) {
				return fmt.Errorf("%s: unknown placeholder {{%s}}: use one of {{%s}}", at, m[1], strings.Join(placeholders, "}}, {{"))
			}
			g.uses[m[1]] = true
		}
		if rest := placeholderRE.ReplaceAllString(t, ""); strings.Contains(rest, "{{") {
			return fmt.Errorf("%s: %q has a {{ that is no placeholder: write placeholders like {{prompt}}", at, t)
		}
	case []any:
		for i, e := range t {
			if err := g.scan(e, fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(t)) {
			if err := g.scan(t[k], at+"."+k); err != nil {
				return err
			}
		}
	}
	return nil
}

// fill returns the workflow's JSON with every placeholder replaced by its
// value in vals: a value that is one placeholder takes the value itself
// (a number stays a number), one inside text takes its text.
func (g *graph) fill(vals map[string]any) (json.RawMessage, error) {
	nodes, err := decodeGraph(g.raw)
	if err != nil {
		return nil, err // parseGraph accepted it: cannot happen
	}
	for _, v := range nodes {
		node := v.(map[string]any)
		inputs := node["inputs"].(map[string]any)
		for k, in := range inputs {
			inputs[k] = substitute(in, vals)
		}
	}
	out, err := json.Marshal(nodes)
	if err != nil {
		return nil, fmt.Errorf("encode workflow: %w", err)
	}
	return out, nil
}

func substitute(v any, vals map[string]any) any {
	switch t := v.(type) {
	case string:
		if m := wholeRE.FindStringSubmatch(t); m != nil {
			return vals[m[1]]
		}
		return placeholderRE.ReplaceAllStringFunc(t, func(s string) string {
			return fmt.Sprint(vals[placeholderRE.FindStringSubmatch(s)[1]])
		})
	case []any:
		for i, e := range t {
			t[i] = substitute(e, vals)
		}
	case map[string]any:
		for k, e := range t {
			t[k] = substitute(e, vals)
		}
	}
	return v
}

// sortedIDs returns node ids in ComfyUI's order: numbers by value, then
// other ids as text, so errors and outputs come out the same every time.
func sortedIDs[V any](m map[string]V) []string {
	ids := slices.Sorted(maps.Keys(m))
	slices.SortStableFunc(ids, compareIDs)
	return ids
}

func compareIDs(a, b string) int {
	na, nb := isDigits(a), isDigits(b)
	switch {
	case na && nb:
		if len(a) != len(b) {
			return len(a) - len(b)
		}
		return strings.Compare(a, b)
	case na:
		return -1
	case nb:
		return 1
	}
	return strings.Compare(a, b)
}

func isDigits(s string) bool {
	if s == "" || (len(s) > 1 && s[0] == '0') {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
