package workflow

import (
	"errors"
	"fmt"
)

// Strategy is how an engine runs a workflow.
type Strategy string

// The strategies, from the most constrained to the most general.
const (
	// StrategyAuto asks for the strategy [DetectStrategy] picks.
	StrategyAuto Strategy = "auto"
	// StrategySingle runs one agent; the other nodes are start, end and
	// data or transform steps around it.
	StrategySingle Strategy = "single"
	// StrategySequential runs every node once, in topological order.
	StrategySequential Strategy = "sequential"
	// StrategyConcurrent runs independent agents at the same time.
	StrategyConcurrent Strategy = "concurrent"
	// StrategyHandoff lets agents pass control by calling a generated
	// handoff_to_<agent> tool; an agent with several outgoing edges chooses.
	StrategyHandoff Strategy = "handoff"
	// StrategyImperative is the general engine: branches, loops, pauses and
	// fan-out. It runs every graph that validates.
	StrategyImperative Strategy = "imperative"
)

var strategies = []Strategy{StrategyAuto, StrategySingle, StrategySequential, StrategyConcurrent, StrategyHandoff, StrategyImperative}

func (s Strategy) known() bool {
	if s == "" {
		return true
	}
	for _, k := range strategies {
		if s == k {
			return true
		}
	}
	return false
}

func strategyNames() []string {
	out := make([]string, len(strategies))
	for i, s := range strategies {
		out[i] = string(s)
	}
	return out
}

// DetectStrategy picks the strategy def needs, ignoring any override in its
// settings. The rules, first match wins:
//
//  1. a node whose kind requires the imperative engine → imperative;
//  2. an agent-like node with more than one outgoing edge → handoff;
//  3. exactly one agent-like node → single;
//  4. two or more agent-like nodes, none reachable from another → concurrent;
//  5. otherwise (agents that depend on each other, or none) → sequential.
//
// The strategy it returns always passes [CheckStrategy]. It fails only when
// def or reg is nil or a node's type is not registered, since then the flags
// that decide are unknown; unavailable kinds still have flags and count.
func DetectStrategy(def *Definition, reg *Registry) (Strategy, error) {
	f, err := inspect(def, reg)
	if err != nil {
		return "", err
	}
	return f.detect(), nil
}

// CheckStrategy reports whether s may run def. auto and imperative fit every
// graph; the other strategies fit only graphs whose shape they can run, as
// explained in the comments of checkStrategy. The error says why not.
func CheckStrategy(def *Definition, reg *Registry, s Strategy) error {
	f, err := inspect(def, reg)
	if err != nil {
		return err
	}
	if !s.known() {
		return fmt.Errorf("workflow: unknown strategy %q", s)
	}
	if err := f.check(s); err != nil {
		return fmt.Errorf("workflow: strategy %s: %w", s, err)
	}
	return nil
}

// checkStrategy is CheckStrategy for Validate, which has resolved the kinds.
func checkStrategy(def *Definition, kinds []*Kind, s Strategy) error {
	if err := facts(def, kinds).check(s); err != nil {
		return fmt.Errorf("strategy %q does not fit this graph: %w", s, err)
	}
	return nil
}

// shape is what the strategy rules read from a graph.
type shape struct {
	imperative string    // id of the first node that requires the imperative engine
	agents     []string  // ids of agent-like nodes, in definition order
	fanOut     string    // id of the first agent with more than one outgoing edge
	dependent  [2]string // an agent and an earlier agent it depends on, if any
}

func inspect(def *Definition, reg *Registry) (*shape, error) {
	if def == nil || reg == nil {
		return nil, errors.New("workflow: strategy: nil definition or registry")
	}
	kinds := make([]*Kind, len(def.Nodes))
	for i, n := range def.Nodes {
		k, ok := reg.Lookup(n.Type)
		if !ok {
			return nil, fmt.Errorf("workflow: strategy: nodes[%d]: unknown node type %q", i, n.Type)
		}
		kinds[i] = &k
	}
	return facts(def, kinds), nil
}

func facts(def *Definition, kinds []*Kind) *shape {
	g := newGraph(def)
	f := &shape{}
	var agents []int
	for i, n := range def.Nodes {
		if j, ok := g.index[n.ID]; !ok || j != i {
			continue // duplicates and id-less nodes are validation problems
		}
		k := kinds[i]
		if k.RequiresImperative && f.imperative == "" {
			f.imperative = n.ID
		}
		if !k.IsAgentLike {
			continue
		}
		agents = append(agents, i)
		f.agents = append(f.agents, n.ID)
		if len(g.succ[i]) > 1 && f.fanOut == "" {
			f.fanOut = n.ID
		}
	}
	for _, a := range agents {
		seen := reach(g.succ, a)
		for _, b := range agents {
			if b != a && seen[b] {
				f.dependent = [2]string{def.Nodes[b].ID, def.Nodes[a].ID}
				return f
			}
		}
	}
	return f
}

func (f *shape) detect() Strategy {
	switch {
	case f.imperative != "":
		return StrategyImperative
	case f.fanOut != "":
		return StrategyHandoff
	case len(f.agents) == 1:
		return StrategySingle
	case len(f.agents) > 1 && f.dependent[0] == "":
		return StrategyConcurrent
	}
	return StrategySequential
}

func (f *shape) check(s Strategy) error {
	switch s {
	case "", StrategyAuto, StrategyImperative:
		// auto resolves to a fitting strategy; the imperative engine runs
		// every kind and every shape.
		return nil
	}
	// Branching, looping, pausing and fan-out nodes exist only in the
	// imperative engine; any other strategy would have to skip them.
	if f.imperative != "" {
		return fmt.Errorf("node %q needs the imperative engine", f.imperative)
	}
	if s == StrategyHandoff {
		// Handoff is agents passing control to each other; with no agent
		// there is nobody to hand control to or from.
		if len(f.agents) == 0 {
			return errors.New("handoff needs at least one agent node")
		}
		return nil
	}
	// An agent with several outgoing edges is a choice between successors.
	// Only handoff lets the agent make it; single, concurrent and sequential
	// would run every successor.
	if f.fanOut != "" {
		return fmt.Errorf("agent %q has several outgoing edges, a choice only handoff or imperative can make", f.fanOut)
	}
	switch s {
	case StrategySingle:
		// Single runs one agent's tool loop; a second agent would be skipped.
		if len(f.agents) != 1 {
			return fmt.Errorf("single needs exactly one agent node, found %d", len(f.agents))
		}
	case StrategyConcurrent:
		// Concurrent starts every agent at once, so none may need another's
		// output; and it needs two agents to be worth it.
		if len(f.agents) < 2 {
			return fmt.Errorf("concurrent needs at least two agent nodes, found %d", len(f.agents))
		}
		if f.dependent[0] != "" {
			return fmt.Errorf("agent %q runs after agent %q, so they cannot run concurrently", f.dependent[0], f.dependent[1])
		}
	case StrategySequential:
		// Sequential runs each node once in topological order; any graph
		// without imperative nodes and agent choices has one (cycles are
		// rejected by validation, and only loop nodes may close them).
	}
	return nil
}
