package workflow_test

import (
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/workflow"
)

// Graphs for the strategy tests, one per detection rule and a few edges of
// the rules. Every node type counts; the agents' configs do not.
var strategyGraphs = map[string]string{
	// A condition requires the imperative engine, whatever the agents do.
	"condition": `
name: t
nodes:
  - {id: start, type: start}
  - {id: c, type: condition, config: {expression: "true"}}
  - {id: a, type: agent, config: {agent: writer}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: c}
  - {id: e2, source: c, target: a, sourceHandle: "true"}
  - {id: e3, source: a, target: end}
`,
	// triage has two outgoing edges: it chooses whom to hand off to.
	"triage": `
name: t
nodes:
  - {id: start, type: start}
  - {id: triage, type: agent, config: {agent: triage}}
  - {id: billing, type: agent, config: {agent: billing}}
  - {id: tech, type: agent, config: {agent: tech}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: triage}
  - {id: e2, source: triage, target: billing}
  - {id: e3, source: triage, target: tech}
  - {id: e4, source: billing, target: end}
  - {id: e5, source: tech, target: end}
`,
	"one agent": chain,
	// A contract gate around the agent is no reason for another strategy.
	"one agent and a contract": `
name: t
nodes:
  - {id: start, type: start}
  - {id: a, type: agent, config: {agent: writer}}
  - {id: gate, type: contract, config: {schema: {type: object}}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: a}
  - {id: e2, source: a, target: gate}
  - {id: e3, source: gate, target: end}
`,
	"independent agents": `
name: t
nodes:
  - {id: start, type: start}
  - {id: en, type: agent, config: {agent: english}}
  - {id: ja, type: agent, config: {agent: japanese}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: en}
  - {id: e2, source: start, target: ja}
  - {id: e3, source: en, target: end}
  - {id: e4, source: ja, target: end}
`,
	// write feeds edit through a normalize node: still a dependency.
	"dependent agents": `
name: t
nodes:
  - {id: start, type: start}
  - {id: write, type: agent, config: {agent: writer}}
  - {id: norm, type: normalize, config: {defaults: {tone: plain}}}
  - {id: edit, type: agent, config: {agent: editor}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: write}
  - {id: e2, source: write, target: norm}
  - {id: e3, source: norm, target: edit}
  - {id: e4, source: edit, target: end}
`,
	"no agents": `
name: t
nodes:
  - {id: start, type: start}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: end}
`,
	// rag is a data node, not imperative: one agent after it stays sequential.
	"retrieval and one agent": `
name: t
nodes:
  - {id: start, type: start}
  - {id: docs, type: rag, config: {knowledge_base: manuals}}
  - {id: a, type: agent, config: {agent: writer}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: docs}
  - {id: e2, source: docs, target: a}
  - {id: e3, source: a, target: end}
`,
	// An autonomous node is agent-like and imperative: imperative wins.
	"autonomous": `
name: t
nodes:
  - {id: start, type: start}
  - {id: auto, type: autonomous, config: {goal: win}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: auto}
  - {id: e2, source: auto, target: end}
`,
}

func TestDetectStrategy(t *testing.T) {
	tests := []struct {
		graph string
		want  workflow.Strategy
	}{
		{"condition", workflow.StrategyImperative},
		{"autonomous", workflow.StrategyImperative},
		{"triage", workflow.StrategyHandoff},
		{"one agent", workflow.StrategySingle},
		{"one agent and a contract", workflow.StrategySingle},
		{"retrieval and one agent", workflow.StrategySingle},
		{"independent agents", workflow.StrategyConcurrent},
		{"dependent agents", workflow.StrategySequential},
		{"no agents", workflow.StrategySequential},
	}
	reg := builtins(t)
	for _, tt := range tests {
		t.Run(tt.graph, func(t *testing.T) {
			def := mustParse(t, strategyGraphs[tt.graph])
			got, err := workflow.DetectStrategy(def, reg)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
			// What detection picks must be accepted as an override.
			if err := workflow.CheckStrategy(def, reg, got); err != nil {
				t.Errorf("detected strategy rejected: %v", err)
			}
		})
	}
}

func TestCheckStrategy(t *testing.T) {
	tests := []struct {
		graph    string
		strategy workflow.Strategy
		wantErr  string // empty: accepted
	}{
		{"condition", workflow.StrategyAuto, ""},
		{"condition", workflow.StrategyImperative, ""},
		{"condition", workflow.StrategySequential, `node "c" needs the imperative engine`},
		{"condition", workflow.StrategySingle, `node "c" needs the imperative engine`},
		{"autonomous", workflow.StrategyHandoff, `node "auto" needs the imperative engine`},

		{"triage", workflow.StrategyImperative, ""},
		{"triage", workflow.StrategySequential, `agent "triage" has several outgoing edges`},
		{"triage", workflow.StrategyConcurrent, `agent "triage" has several outgoing edges`},

		{"one agent", workflow.StrategySequential, ""},
		{"one agent", workflow.StrategyHandoff, ""},
		{"one agent", workflow.StrategyConcurrent, "concurrent needs at least two agent nodes, found 1"},

		{"independent agents", workflow.StrategySequential, ""},
		{"independent agents", workflow.StrategyHandoff, ""},
		{"independent agents", workflow.StrategySingle, "single needs exactly one agent node, found 2"},

		{"dependent agents", workflow.StrategyConcurrent, `agent "edit" runs after agent "write"`},
		{"dependent agents", workflow.StrategySingle, "single needs exactly one agent node, found 2"},
		{"dependent agents", workflow.StrategyImperative, ""},

		{"no agents", workflow.StrategyHandoff, "handoff needs at least one agent node"},
		{"no agents", workflow.StrategySingle, "single needs exactly one agent node, found 0"},

		{"one agent", "fastest", `unknown strategy "fastest"`},
	}
	reg := builtins(t)
	for _, tt := range tests {
		t.Run(tt.graph+"/"+string(tt.strategy), func(t *testing.T) {
			err := workflow.CheckStrategy(mustParse(t, strategyGraphs[tt.graph]), reg, tt.strategy)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("rejected: %v", err)
			case tt.wantErr != "" && err == nil:
				t.Errorf("accepted, want an error containing %q", tt.wantErr)
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Errorf("error %q, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestDetectStrategyUnknownType(t *testing.T) {
	def := mustParse(t, strings.Replace(chain, "type: agent, config: {agent: writer}", "type: agnet", 1))
	if _, err := workflow.DetectStrategy(def, builtins(t)); err == nil || !strings.Contains(err.Error(), `nodes[1]: unknown node type "agnet"`) {
		t.Errorf("got %v, want an error naming nodes[1] and its type", err)
	}
	if _, err := workflow.DetectStrategy(nil, builtins(t)); err == nil {
		t.Error("nil definition: want an error")
	}
}
