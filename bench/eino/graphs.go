package eino

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/cloudwego/eino/compose"

	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/nodes"
)

// sep joins parallel branch outputs: AgentCraft's default separator for a
// parallel node's concatenate merge, and the one the Eino merge uses.
const sep = "\n\n"

// work is what every node does on both engines: AgentCraft's code node
// in text mode with operation trim runs strings.TrimSpace, and so does
// every Eino lambda. Trim is the cheapest deterministic code mode that
// still does the same work on both sides (template "{{input}}" would
// render a template on AgentCraft's side against a bare return on Eino's).
func work(_ context.Context, in string) (string, error) { return strings.TrimSpace(in), nil }

// codeNode is the AgentCraft node doing [work].
func codeNode(id string) map[string]any {
	return map[string]any{"id": id, "type": "code", "config": map[string]any{"mode": "text", "operation": "trim"}}
}

func edge(i int, src, tgt string) map[string]any {
	return map[string]any{"id": fmt.Sprintf("e%d", i), "source": src, "target": tgt}
}

// chainJSON is start → n code nodes in a chain → end.
func chainJSON(n int) []byte {
	ns := []map[string]any{{"id": "start", "type": "start"}}
	var es []map[string]any
	prev := "start"
	for i := range n {
		id := fmt.Sprintf("n%d", i)
		ns = append(ns, codeNode(id))
		es = append(es, edge(len(es), prev, id))
		prev = id
	}
	ns = append(ns, map[string]any{"id": "end", "type": "end"})
	es = append(es, edge(len(es), prev, "end"))
	return definition("chain", ns, es)
}

// fanoutJSON is start → parallel (concatenate) → n branch code nodes →
// end, the end node being the join of every branch.
func fanoutJSON(n int) []byte {
	ns := []map[string]any{
		{"id": "start", "type": "start"},
		{"id": "p", "type": "parallel", "config": map[string]any{"merge": "concatenate"}},
	}
	es := []map[string]any{edge(0, "start", "p")}
	for i := range n {
		id := fmt.Sprintf("b%d", i)
		ns = append(ns, codeNode(id))
		es = append(es, edge(len(es), "p", id))
	}
	ns = append(ns, map[string]any{"id": "end", "type": "end"})
	for i := range n {
		es = append(es, edge(len(es), fmt.Sprintf("b%d", i), "end"))
	}
	return definition("fanout", ns, es)
}

func definition(name string, ns, es []map[string]any) []byte {
	b, err := json.Marshal(map[string]any{
		"name": name, "nodes": ns, "edges": es,
		// The default cap of 1000 node executions would stop the fan-out.
		"settings": map[string]any{"max_steps": 100000},
	})
	if err != nil {
		panic(err) // maps of strings always marshal
	}
	return b
}

// prepare returns an engine with the built-in kinds and src prepared on it.
func prepare(src []byte) (*workflow.Engine, *workflow.Plan, error) {
	reg := workflow.NewRegistry()
	if err := nodes.RegisterBuiltins(reg); err != nil {
		return nil, nil, err
	}
	e := workflow.NewEngine(reg, workflow.Services{}, nil)
	def, err := workflow.Parse(src)
	if err != nil {
		return nil, nil, err
	}
	p, err := e.Prepare(def)
	if err != nil {
		return nil, nil, err
	}
	return e, p, nil
}

// einoChain compiles START → n lambdas doing [work] in a chain → END.
func einoChain(ctx context.Context, n int, mode compose.NodeTriggerMode) (compose.Runnable[string, string], error) {
	g := compose.NewGraph[string, string]()
	prev := compose.START
	for i := range n {
		id := fmt.Sprintf("n%d", i)
		if err := g.AddLambdaNode(id, compose.InvokableLambda(work)); err != nil {
			return nil, err
		}
		if err := g.AddEdge(prev, id); err != nil {
			return nil, err
		}
		prev = id
	}
	if err := g.AddEdge(prev, compose.END); err != nil {
		return nil, err
	}
	return g.Compile(ctx, compose.WithNodeTriggerMode(mode))
}

// einoFanout compiles START → n lambdas doing [work] → join → END. The
// join receives the n string outputs merged by [concat], registered for
// string with compose.RegisterValuesMergeFunc (Eino merges fan-in of maps
// by default and refuses other types without a merge function). The join
// does [work] on the merged text, a no-op on it, where AgentCraft's end
// node passes the parallel node's output on unchanged. Eino hands fan-in values over in map order, so the branch order
// within the merged text varies from run to run, where AgentCraft's
// follows the branches' edge order.
func einoFanout(ctx context.Context, n int, mode compose.NodeTriggerMode) (compose.Runnable[string, string], error) {
	registerConcat()
	g := compose.NewGraph[string, string]()
	if err := g.AddLambdaNode("join", compose.InvokableLambda(work)); err != nil {
		return nil, err
	}
	for i := range n {
		id := fmt.Sprintf("b%d", i)
		if err := g.AddLambdaNode(id, compose.InvokableLambda(work)); err != nil {
			return nil, err
		}
		if err := g.AddEdge(compose.START, id); err != nil {
			return nil, err
		}
		if err := g.AddEdge(id, "join"); err != nil {
			return nil, err
		}
	}
	if err := g.AddEdge("join", compose.END); err != nil {
		return nil, err
	}
	return g.Compile(ctx, compose.WithNodeTriggerMode(mode))
}

// concat is AgentCraft's concatenate merge for Eino's fan-in.
func concat(vs []string) (string, error) { return strings.Join(vs, sep), nil }

var concatOnce sync.Once

// registerConcat registers concat as Eino's merge of strings. Eino's
// registry is a global map without a lock: register once, before any
// graph runs, so no Invoke reads it while it is written.
func registerConcat() { concatOnce.Do(func() { compose.RegisterValuesMergeFunc(concat) }) }
