package workflow

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"
)

// Compound kinds own a body of nodes that they run themselves: a loop runs
// its body again and again, an iteration once per item, a parallel node
// each branch at once. Every other node runs once where it stands.
const (
	CompoundLoop      = "loop"
	CompoundIteration = "iteration"
	CompoundParallel  = "parallel"
)

// InvalidError is returned by [Engine.Prepare] for a definition that does
// not validate; it holds every problem.
type InvalidError struct {
	Problems []Problem
}

func (e *InvalidError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "workflow: %d problem(s):", len(e.Problems))
	for _, p := range e.Problems {
		fmt.Fprintf(&b, "\n  %s: %s (%s)", p.Path, p.Message, p.Hint)
	}
	return b.String()
}

// Plan is a validated definition prepared to run: its graph, the scope of
// every node and its compiled expressions. It is immutable and safe to run
// many times at once.
type Plan struct {
	Def      *Definition
	Strategy Strategy
	hooks    *hooks

	nodes []planNode
	edges []Edge
	// esrc and etgt are the node indexes of each edge's ends.
	esrc, etgt []int
	start      int
	top        *scope
	// maxSteps and timeout come from the settings, or the engine defaults.
	maxSteps int
	timeout  time.Duration
}

type planNode struct {
	node *Node
	kind Kind
	// scope is the scope the node runs in; body is the scope it owns
	// (compound kinds only).
	scope *scope
	body  *scope
	// branches are a parallel node's branch scopes, in edge order.
	branches []*scope
	// outs are the node's outgoing edges as its scope sees them: its own
	// edges into its scope, plus (for compounds) edges that leave its
	// body, which it activates when the body is done.
	outs []int
	// programs are the node's compiled expressions: condition and loop
	// under "", router routes by name.
	programs map[string]*vm.Program
	// readsNodes: the config mentions nodes.<id>, so the node needs the
	// outputs of other nodes (otherwise it is spared the copy).
	readsNodes bool
	// handoff: an agent-like node with several outgoing edges, which
	// chooses one by calling a handoff_to_<node> tool.
	handoff bool
}

// scope is a set of nodes scheduled together: the whole graph, a loop or
// iteration body, or one branch of a parallel node. Inside a scope the
// graph is acyclic.
type scope struct {
	owner int   // compound node index; -1 for the top scope
	nodes []int // member nodes in definition order
	// in are the incoming edges of each member inside the scope.
	in map[int][]int
	// entry are the edges from the owner into the scope, active when
	// the scope starts.
	entry []int
	// exits are edges from members to nodes outside the scope (back to a
	// loop, on to a parallel's join); exitSources their sources.
	exits []int
	// sinks are members without a successor in the scope: their outputs
	// make the body's output.
	sinks   []int
	members map[int]bool
	// branch is the index of a parallel branch scope among its owner's.
	branch int
}

// prepare builds a plan from a definition Validate accepted.
func prepare(def *Definition, reg *Registry, defaults EngineDefaults) (*Plan, error) {
	if probs := Validate(def, reg); len(probs) > 0 {
		return nil, &InvalidError{Problems: probs}
	}
	strategy := def.Settings.Strategy
	if strategy == "" || strategy == StrategyAuto {
		s, err := DetectStrategy(def, reg)
		if err != nil {
			return nil, err
		}
		strategy = s
	}
	p := &Plan{Def: def, Strategy: strategy, edges: def.Edges, start: -1,
		maxSteps: def.Settings.MaxSteps, timeout: def.Settings.Timeout}
	if p.maxSteps == 0 {
		p.maxSteps = defaults.MaxSteps
	}
	if p.timeout == 0 {
		p.timeout = defaults.Timeout
	}
	h, probs := parseHooks(def.Hooks)
	if len(probs) > 0 {
		return nil, &InvalidError{Problems: probs}
	}
	p.hooks = h
	g := newGraph(def)
	p.esrc, p.etgt = make([]int, len(def.Edges)), make([]int, len(def.Edges))
	for ei, e := range def.Edges {
		p.esrc[ei], p.etgt[ei] = g.index[e.Source], g.index[e.Target]
	}
	p.nodes = make([]planNode, len(def.Nodes))
	for i := range def.Nodes {
		n := &def.Nodes[i]
		k, _ := reg.Lookup(n.Type)
		pn := planNode{node: n, kind: k}
		if n.Type == "start" {
			p.start = i
		}
		if len(n.Config) > 0 {
			b, _ := json.Marshal(n.Config)
			pn.readsNodes = strings.Contains(string(b), "nodes")
		}
		progs, err := compileExpressions(n)
		if err != nil {
			return nil, &InvalidError{Problems: []Problem{{Path: fmt.Sprintf("nodes[%d].config", i), Message: err.Error(), Hint: "fix the expression"}}}
		}
		pn.programs = progs
		pn.handoff = k.IsAgentLike && len(g.outs[i]) > 1
		p.nodes[i] = pn
	}
	if p.start < 0 {
		return nil, errors.New("workflow: no start node")
	}
	all := make([]int, len(def.Nodes))
	for i := range all {
		all[i] = i
	}
	top, probs := p.buildScope(g, -1, all, nil)
	if len(probs) > 0 {
		return nil, &InvalidError{Problems: probs}
	}
	p.top = top
	return p, nil
}

// buildScope makes the scope of members, carving out the bodies of the
// compound nodes among them (recursively).
func (p *Plan) buildScope(g *graph, owner int, members []int, entry []int) (*scope, []Problem) {
	in := map[int]bool{}
	for _, m := range members {
		in[m] = true
	}
	var probs []Problem
	// Bodies of compounds directly in this scope. A compound inside
	// another's body is handled when that body is built.
	bodies := map[int][]int{}
	branchSets := map[int][][]int{}
	for _, m := range members {
		switch p.nodes[m].kind.Compound {
		case CompoundLoop, CompoundIteration:
			bodies[m] = p.loopBody(g, m, in)
		case CompoundParallel:
			sets := p.branchBodies(g, m, in)
			branchSets[m] = sets
			var all []int
			for _, s := range sets {
				all = append(all, s...)
			}
			bodies[m] = all
		}
	}
	inner := map[int]int{} // node → compound whose body holds it (outermost in this scope)
	for c, body := range bodies {
		for _, n := range body {
			if prev, ok := inner[n]; ok && prev != c {
				// n is in two bodies: keep the larger one (the outer compound).
				if len(bodies[prev]) >= len(bodies[c]) {
					continue
				}
			}
			inner[n] = c
		}
	}
	// A compound that lies inside another's body is not outer here.
	sc := &scope{owner: owner, in: map[int][]int{}, entry: entry, members: map[int]bool{}}
	for _, m := range members {
		if _, hidden := inner[m]; !hidden {
			sc.nodes = append(sc.nodes, m)
			sc.members[m] = true
			p.nodes[m].scope = sc
		}
	}
	// Build the bodies of the outer compounds.
	for _, c := range sc.nodes {
		body, ok := bodies[c]
		if !ok {
			continue
		}
		switch p.nodes[c].kind.Compound {
		case CompoundParallel:
			for bi, set := range branchSets[c] {
				var ent []int
				for _, ei := range g.outs[c] {
					if slices.Contains(set, g.index[p.edges[ei].Target]) {
						ent = append(ent, ei)
					}
				}
				bs, pr := p.buildScope(g, c, set, ent)
				probs = append(probs, pr...)
				if bs != nil {
					bs.branch = bi
					p.nodes[c].branches = append(p.nodes[c].branches, bs)
				}
			}
		default:
			var ent []int
			for _, ei := range g.outs[c] {
				if p.edges[ei].SourceHandle == "body" {
					ent = append(ent, ei)
				}
			}
			bs, pr := p.buildScope(g, c, body, ent)
			probs = append(probs, pr...)
			p.nodes[c].body = bs
		}
	}
	// Edges: classify each edge whose target is a member of this scope.
	for ei, e := range p.edges {
		s, okS := g.index[e.Source]
		t, okT := g.index[e.Target]
		if !okS || !okT {
			continue
		}
		if sc.members[t] {
			src := p.effective(s, sc)
			switch {
			case src < 0:
				// from outside: an entry edge (handled by the owner)
			case src == t:
				// a loop's body coming back: not an input of the loop here
			default:
				sc.in[t] = append(sc.in[t], ei)
				if !slices.Contains(p.nodes[src].outs, ei) {
					p.nodes[src].outs = append(p.nodes[src].outs, ei)
				}
			}
		} else if sc.members[s] && owner >= 0 && !p.inBody(t, sc) {
			sc.exits = append(sc.exits, ei)
		}
	}
	// Sinks: members with no outgoing edge inside the scope.
	for _, m := range sc.nodes {
		inside := false
		for _, ei := range p.nodes[m].outs {
			if t := g.index[p.edges[ei].Target]; sc.members[t] {
				inside = true
				break
			}
		}
		if !inside {
			sc.sinks = append(sc.sinks, m)
		}
	}
	// Loop and iteration bodies must not leave their scope except back
	// to the loop.
	if owner >= 0 && p.nodes[owner].kind.Compound != CompoundParallel {
		for _, ei := range sc.exits {
			t := g.index[p.edges[ei].Target]
			if t != owner {
				probs = append(probs, Problem{Path: fmt.Sprintf("edges[%d]", ei),
					Message: fmt.Sprintf("edge leaves the body of %s node %q for %q", p.nodes[owner].node.Type, p.nodes[owner].node.ID, p.edges[ei].Target),
					Hint:    "end the body inside it (a loop body returns to the loop node); continue after the body from the node's done edge"})
			}
		}
	}
	return sc, probs
}

// inBody reports whether node n belongs to sc or to a scope nested in it.
func (p *Plan) inBody(n int, sc *scope) bool {
	for s := p.nodes[n].scope; s != nil; {
		if s == sc {
			return true
		}
		if s.owner < 0 {
			return false
		}
		s = p.nodes[s.owner].scope
	}
	return false
}

// effective returns the node that stands for s in scope sc: s itself when
// it is a member, else the member compound whose body holds s; -1 when s
// is outside sc altogether.
func (p *Plan) effective(s int, sc *scope) int {
	for n := s; ; {
		if sc.members[n] {
			return n
		}
		ns := p.nodes[n].scope
		if ns == nil || ns.owner < 0 {
			return -1
		}
		n = ns.owner
	}
}

// loopBody returns the body of a loop or iteration c within the members in:
// the nodes reachable from its "body" edges without passing c. For a loop,
// only nodes that lead back to c belong (the rest is reported as an edge
// leaving the body).
func (p *Plan) loopBody(g *graph, c int, in map[int]bool) []int {
	var from []int
	for _, ei := range g.outs[c] {
		if p.edges[ei].SourceHandle == "body" {
			from = append(from, g.index[p.edges[ei].Target])
		}
	}
	return p.reachWithin(g, c, from, in)
}

// branchBodies returns, per outgoing edge of the parallel node c, the
// nodes only that branch reaches; nodes two branches reach are joins and
// stay outside.
func (p *Plan) branchBodies(g *graph, c int, in map[int]bool) [][]int {
	var reached [][]int
	count := map[int]int{}
	for _, ei := range g.outs[c] {
		r := p.reachWithin(g, c, []int{g.index[p.edges[ei].Target]}, in)
		reached = append(reached, r)
		for _, n := range r {
			count[n]++
		}
	}
	sets := make([][]int, len(reached))
	for i, r := range reached {
		for _, n := range r {
			if count[n] == 1 {
				sets[i] = append(sets[i], n)
			}
		}
	}
	return sets
}

// reachWithin returns the members of in reachable from the given nodes
// without passing through c, in definition order.
func (p *Plan) reachWithin(g *graph, c int, from []int, in map[int]bool) []int {
	seen := map[int]bool{}
	stack := []int{}
	for _, f := range from {
		if f != c && in[f] && !seen[f] {
			seen[f] = true
			stack = append(stack, f)
		}
	}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, m := range g.succ[n] {
			if m != c && in[m] && !seen[m] {
				seen[m] = true
				stack = append(stack, m)
			}
		}
	}
	var out []int
	for i := range p.nodes {
		if seen[i] {
			out = append(out, i)
		}
	}
	return out
}

// compileExpressions compiles a node's expr-lang expressions once.
func compileExpressions(n *Node) (map[string]*vm.Program, error) {
	progs := map[string]*vm.Program{}
	compile := func(name, src string) error {
		prog, err := expr.Compile(src, expr.AsBool())
		if err != nil {
			return fmt.Errorf("expression %q: %w", src, err)
		}
		progs[name] = prog
		return nil
	}
	switch n.Type {
	case "condition":
		if s, ok := n.Config["expression"].(string); ok {
			if err := compile("", s); err != nil {
				return nil, err
			}
		}
	case "loop":
		if s, ok := n.Config["condition"].(string); ok {
			if err := compile("", s); err != nil {
				return nil, err
			}
		}
	case "router":
		routes, _ := n.Config["routes"].([]any)
		for _, r := range routes {
			route, _ := r.(map[string]any)
			name, _ := route["name"].(string)
			if s, ok := route["expression"].(string); ok {
				if err := compile(name, s); err != nil {
					return nil, err
				}
			}
		}
	}
	if len(progs) == 0 {
		return nil, nil
	}
	return progs, nil
}

// Downstream returns the ids of the nodes a re-run from node id must run
// again: id, every node reachable from it, and the compound nodes (loop,
// iteration, parallel) whose bodies hold any of those, since their saved
// output covers their whole body. Unknown ids give nil.
func (p *Plan) Downstream(id string) map[string]bool {
	g := newGraph(p.Def)
	from, ok := g.index[id]
	if !ok {
		return nil
	}
	seen := reach(g.succ, from)
	out := map[string]bool{}
	for i, s := range seen {
		if !s {
			continue
		}
		out[p.nodes[i].node.ID] = true
		for sc := p.nodes[i].scope; sc != nil && sc.owner >= 0; sc = p.nodes[sc.owner].scope {
			out[p.nodes[sc.owner].node.ID] = true
		}
	}
	return out
}
