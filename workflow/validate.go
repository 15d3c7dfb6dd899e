package workflow

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Problem is one thing wrong with a definition.
type Problem struct {
	// Path is the JSON path of the offending value, such as
	// "nodes[3].config.expression" or "edges[1].target".
	Path string `json:"path"`
	// Message says what is wrong.
	Message string `json:"message"`
	// Hint says how to fix it.
	Hint string `json:"hint"`
}

func (p Problem) String() string {
	s := p.Path + ": " + p.Message
	if p.Hint != "" {
		s += " (" + p.Hint + ")"
	}
	return s
}

// The node types the validator itself knows about: the graph rules for start
// and end, and loop as the one kind a cycle may pass through. Everything else
// about a kind comes from the registry.
const (
	typeStart = "start"
	typeEnd   = "end"
	typeLoop  = "loop"
)

// nodeID is what templates ({{nodes.<id>.output}}) can refer to.
var nodeID = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// nodeRef finds template references to node outputs.
var nodeRef = regexp.MustCompile(`\{\{\s*nodes\.([^.\s}]*)`)

// Validate reports every problem of def at once, in a stable order: nodes,
// edges, then whole-graph rules (start, reachability, cycles, references)
// and settings. A nil result means the definition is valid for reg.
//
// Rules that need a sound graph skip the parts already reported broken
// (a dangling edge does not also make its target unreachable twice over),
// so one mistake yields one problem wherever that is possible.
func Validate(def *Definition, reg *Registry) []Problem {
	if def == nil {
		return []Problem{{Path: "definition", Message: "no definition", Hint: "parse one with workflow.Parse"}}
	}
	if reg == nil {
		return []Problem{{Path: "definition", Message: "no node registry", Hint: "pass workflow.NewRegistry() with nodes.RegisterBuiltins applied"}}
	}
	v := &validator{def: def, reg: reg, g: newGraph(def), kinds: make([]*Kind, len(def.Nodes))}
	if strings.TrimSpace(def.Name) == "" {
		v.add("name", "missing workflow name", "add a name, such as \"content-package\"")
	}
	v.nodes()
	v.edges()
	v.starts()
	v.cycles()
	v.references()
	v.settings()
	_, hookProbs := parseHooks(def.Hooks)
	v.probs = append(v.probs, hookProbs...)
	return v.probs
}

type validator struct {
	def   *Definition
	reg   *Registry
	g     *graph
	kinds []*Kind // by node index; nil when the type is unknown
	probs []Problem
}

func (v *validator) add(path, msg, hint string) {
	v.probs = append(v.probs, Problem{Path: path, Message: msg, Hint: hint})
}

// owned reports whether node i is the one its id refers to (not a duplicate
// or id-less node), so graph rules may talk about it.
func (v *validator) owned(i int) bool {
	j, ok := v.g.index[v.def.Nodes[i].ID]
	return ok && j == i
}

func (v *validator) nodes() {
	for i, n := range v.def.Nodes {
		at := fmt.Sprintf("nodes[%d]", i)
		switch first, ok := v.g.index[n.ID]; {
		case n.ID == "":
			v.add(at+".id", "missing node id", "give the node a unique id such as \"plan\"")
		case ok && first != i:
			v.add(at+".id", fmt.Sprintf("duplicate node id %q, first used by nodes[%d]", n.ID, first), "give every node a unique id")
		case !nodeID.MatchString(n.ID):
			v.add(at+".id", fmt.Sprintf("node id %q has characters templates cannot refer to", n.ID), "use only letters, digits, '_' and '-'")
		}
		if n.Type == "" {
			v.add(at+".type", "missing node type", "set type to one of: "+strings.Join(v.reg.types(), ", "))
			continue
		}
		k, ok := v.reg.Lookup(n.Type)
		if !ok {
			v.add(at+".type", fmt.Sprintf("unknown node type %q", n.Type), "use one of: "+strings.Join(v.reg.types(), ", "))
			continue
		}
		v.kinds[i] = &k
		if k.Unavailable != "" {
			v.add(at+".type", fmt.Sprintf("node type %q is not available yet: %s", n.Type, k.Unavailable), "remove the node or replace it with an available kind until its executor lands")
			continue
		}
		v.probs = append(v.probs, k.CheckConfig(n.Config, at+".config")...)
	}
}

func (v *validator) edges() {
	seen := map[string]int{}
	for i, e := range v.def.Edges {
		at := fmt.Sprintf("edges[%d]", i)
		if e.ID == "" {
			v.add(at+".id", "missing edge id", fmt.Sprintf("give the edge a unique id such as \"%s-%s\"", e.Source, e.Target))
		} else if first, dup := seen[e.ID]; dup {
			v.add(at+".id", fmt.Sprintf("duplicate edge id %q, first used by edges[%d]", e.ID, first), "give every edge a unique id")
		} else {
			seen[e.ID] = i
		}
		s, okS := v.g.index[e.Source]
		t, okT := v.g.index[e.Target]
		if !okS {
			v.add(at+".source", dangling("source", e.Source), "set source to the id of an existing node")
		}
		if !okT {
			v.add(at+".target", dangling("target", e.Target), "set target to the id of an existing node")
		}
		if okT && v.def.Nodes[t].Type == typeStart {
			v.add(at+".target", "an edge enters the start node", "start only has outgoing edges; point the edge at another node")
		}
		if !okS {
			continue
		}
		if v.def.Nodes[s].Type == typeEnd {
			v.add(at+".source", "an edge leaves an end node", "end only has incoming edges; remove the edge or use another node")
		}
		k := v.kinds[s]
		if k == nil || k.Handles == nil || k.Unavailable != "" {
			continue
		}
		handles := k.Handles(v.def.Nodes[s].Config)
		if !slices.Contains(handles, e.SourceHandle) {
			msg := fmt.Sprintf("edge leaves %s node %q without a sourceHandle", k.Type, e.Source)
			if e.SourceHandle != "" {
				msg = fmt.Sprintf("sourceHandle %q is not an output of %s node %q", e.SourceHandle, k.Type, e.Source)
			}
			hint := "this node has no outputs to connect yet; fix its config"
			if len(handles) > 0 {
				hint = "set sourceHandle to one of: " + strings.Join(handles, ", ")
			}
			v.add(at+".sourceHandle", msg, hint)
		}
	}
}

func dangling(end, id string) string {
	if id == "" {
		return "missing edge " + end
	}
	return fmt.Sprintf("edge %s %q is not a node of this workflow", end, id)
}

// starts checks that there is exactly one start and that every node can be
// reached from it.
func (v *validator) starts() {
	var starts []int
	for i, n := range v.def.Nodes {
		if n.Type == typeStart && v.owned(i) {
			starts = append(starts, i)
		}
	}
	switch {
	case len(starts) == 0:
		v.add("nodes", "no start node", "add a node with type \"start\" and connect it to the first step")
		return
	case len(starts) > 1:
		for _, i := range starts[1:] {
			v.add(fmt.Sprintf("nodes[%d].type", i), fmt.Sprintf("more than one start node; nodes[%d] is already the start", starts[0]), "keep one start node and connect its edges to the first steps")
		}
	}
	seen := reach(v.g.succ, starts...)
	for i, n := range v.def.Nodes {
		if v.owned(i) && !seen[i] {
			v.add(fmt.Sprintf("nodes[%d]", i), fmt.Sprintf("node %q is not reachable from start", n.ID), "connect it with an edge from start or a node after it, or remove it")
		}
	}
}

// cycles reports every cycle that avoids loop nodes: only a loop bounds how
// often a cycle runs, so any other cycle would run until max_steps.
func (v *validator) cycles() {
	notLoop := func(i int) bool { return v.def.Nodes[i].Type != typeLoop }
	for _, comp := range cycles(v.g.succ, notLoop) {
		ids := make([]string, len(comp))
		for j, i := range comp {
			ids[j] = v.def.Nodes[i].ID
		}
		v.add(fmt.Sprintf("nodes[%d]", comp[0]),
			fmt.Sprintf("nodes %s form a cycle without a loop node", strings.Join(ids, ", ")),
			"remove an edge of the cycle, or route it through a loop node, which bounds the iterations")
	}
}

// references checks that a template reading {{nodes.<id>.output}} names a
// node that always runs before the reader: one of its ancestors.
func (v *validator) references() {
	for i, n := range v.def.Nodes {
		if !v.owned(i) || len(n.Config) == 0 {
			continue
		}
		var anc []bool // computed on the first reference
		walkStrings(n.Config, fmt.Sprintf("nodes[%d].config", i), func(path, s string) {
			for _, m := range nodeRef.FindAllStringSubmatch(s, -1) {
				id := m[1]
				j, ok := v.g.index[id]
				if !ok {
					v.add(path, fmt.Sprintf("template reads node %q, which does not exist", id), "refer to the id of a node before this one, as {{nodes.<id>.output}}")
					continue
				}
				if anc == nil {
					anc = reach(v.g.pred, i)
				}
				if j == i || !anc[j] {
					v.add(path, fmt.Sprintf("template reads node %q, which does not run before %q", id, n.ID), fmt.Sprintf("add an edge path from %q to %q, or read a node that comes before it", id, n.ID))
				}
			}
		})
	}
}

func (v *validator) settings() {
	s := v.def.Settings
	if s.Timeout < 0 {
		v.add("settings.timeout", "negative timeout", "use a positive duration such as \"5m\", or leave it out for the server default")
	}
	if s.MaxSteps < 0 {
		v.add("settings.max_steps", "negative max_steps", "use a positive number, or leave it out for the server default")
	}
	if !s.Strategy.known() {
		v.add("settings.strategy", fmt.Sprintf("unknown strategy %q", s.Strategy), "use one of: "+strings.Join(strategyNames(), ", "))
		return
	}
	if slices.Contains(v.kinds, nil) {
		return // unknown node types are reported; their flags are unknown
	}
	if err := checkStrategy(v.def, v.kinds, s.Strategy); err != nil {
		v.add("settings.strategy", err.Error(), "set strategy to \"auto\" or to one the graph allows")
	}
}
