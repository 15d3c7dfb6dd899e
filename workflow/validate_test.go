package workflow_test

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/workflow"
)

func TestValidateExamplesClean(t *testing.T) {
	reg := builtins(t)
	for _, file := range []string{"testdata/review-loop.yaml", "testdata/triage.json"} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		def := mustParse(t, string(data))
		if probs := workflow.Validate(def, reg); len(probs) > 0 {
			t.Errorf("%s: want no problems, got:\n%s", file, list(probs))
		}
	}
}

// chain is start → a (agent) → end; most malformed cases below change a
// little of it so each shows one mistake and all its consequences.
const chain = `
name: t
nodes:
  - {id: start, type: start}
  - {id: a, type: agent, config: {agent: writer}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: a}
  - {id: e2, source: a, target: end}
`

func TestValidateChainClean(t *testing.T) {
	if probs := workflow.Validate(mustParse(t, chain), builtins(t)); len(probs) > 0 {
		t.Fatalf("want no problems, got:\n%s", list(probs))
	}
}

// TestValidateMalformed checks that each malformed definition reports all
// its problems, each at its exact JSON path, in Validate's order.
func TestValidateMalformed(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{
			name: "broken hooks",
			src: `
name: t
hooks:
  block_pattern: "(unclosed"
  on_input: [{type: code, mode: nope}]
  post_agent: [{type: webhook, url: "ftp://x", retries: 9}, {type: email}]
  on_finish: []
nodes:
  - {id: start, type: start}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: end}
`,
			want: []string{"hooks.block_pattern", "hooks.on_finish", "hooks.on_input[0].mode", "hooks.post_agent[0].url", "hooks.post_agent[0].retries", "hooks.post_agent[1].type"},
		},
		{
			name: "unknown node type",
			src: `
name: t
nodes:
  - {id: start, type: start}
  - {id: a, type: agnet}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: a}
  - {id: e2, source: a, target: end}
`,
			want: []string{"nodes[1].type"},
		},
		{
			name: "missing node type and id",
			src: `
name: t
nodes:
  - {id: start, type: start}
  - {id: a}
  - {type: end}
edges:
  - {id: e1, source: start, target: a}
`,
			want: []string{"nodes[1].type", "nodes[2].id"},
		},
		{
			name: "duplicate node id",
			src: `
name: t
nodes:
  - {id: start, type: start}
  - {id: a, type: agent, config: {agent: writer}}
  - {id: a, type: agent, config: {agent: editor}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: a}
  - {id: e2, source: a, target: end}
`,
			want: []string{"nodes[2].id"},
		},
		{
			name: "duplicate edge id",
			src: `
name: t
nodes:
  - {id: start, type: start}
  - {id: a, type: agent, config: {agent: writer}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: a}
  - {id: e1, source: a, target: end}
`,
			want: []string{"edges[1].id"},
		},
		{
			name: "dangling edges",
			src: chain + `
  - {id: e3, source: a, target: ghost}
  - {id: e4, source: nowhere, target: end}
`,
			want: []string{"edges[2].target", "edges[3].source"},
		},
		{
			name: "edge without id, source and target",
			src: chain + `
  - {}
`,
			want: []string{"edges[2].id", "edges[2].source", "edges[2].target"},
		},
		{
			name: "missing required config",
			src: `
name: t
nodes:
  - {id: start, type: start}
  - {id: ask, type: human}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: ask}
  - {id: e2, source: ask, target: end}
`,
			want: []string{"nodes[1].config.prompt"},
		},
		{
			name: "config of the wrong type",
			src: `
name: t
nodes:
  - {id: start, type: start}
  - {id: a, type: agent, config: {agent: writer, max_turns: ten, temperature: true, tools: [search, 3]}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: a}
  - {id: e2, source: a, target: end}
`,
			want: []string{"nodes[1].config.tools[1]", "nodes[1].config.max_turns", "nodes[1].config.temperature"},
		},
		{
			name: "agent with neither agent nor model",
			src: `
name: t
nodes:
  - {id: start, type: start}
  - {id: a, type: agent, config: {prompt: hi}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: a}
  - {id: e2, source: a, target: end}
`,
			want: []string{"nodes[1].config.agent"},
		},
		{
			name: "misspelt config key",
			src: `
name: t
nodes:
  - {id: start, type: start}
  - {id: c, type: condition, config: {expresion: "input != ''"}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: c}
  - {id: e2, source: c, target: end, sourceHandle: "true"}
`,
			want: []string{"nodes[1].config.expression", "nodes[1].config.expresion"},
		},
		{
			name: "unreachable node",
			src: `
name: t
nodes:
  - {id: start, type: start}
  - {id: a, type: agent, config: {agent: writer}}
  - {id: end, type: end}
  - {id: orphan, type: agent, config: {agent: editor}}
edges:
  - {id: e1, source: start, target: a}
  - {id: e2, source: a, target: end}
  - {id: e3, source: orphan, target: end}
`,
			want: []string{"nodes[3]"},
		},
		{
			name: "no start",
			src: `
name: t
nodes:
  - {id: a, type: agent, config: {agent: writer}}
  - {id: end, type: end}
edges:
  - {id: e1, source: a, target: end}
`,
			want: []string{"nodes"},
		},
		{
			name: "two starts",
			src: chain[:strings.Index(chain, "edges:")] + `  - {id: start2, type: start}
edges:
  - {id: e1, source: start, target: a}
  - {id: e2, source: a, target: end}
  - {id: e3, source: start2, target: a}
`,
			want: []string{"nodes[3].type"},
		},
		{
			name: "edge into start and out of end",
			src: chain + `
  - {id: e3, source: a, target: start}
  - {id: e4, source: end, target: a}
`,
			// a → start and end → a also close cycles without a loop.
			want: []string{"edges[2].target", "edges[3].source", "nodes[0]"},
		},
		{
			name: "cycle without a loop node",
			src: `
name: t
nodes:
  - {id: start, type: start}
  - {id: write, type: agent, config: {agent: writer}}
  - {id: edit, type: agent, config: {agent: editor}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: write}
  - {id: e2, source: write, target: edit}
  - {id: e3, source: edit, target: write}
  - {id: e4, source: edit, target: end}
`,
			want: []string{"nodes[1]"},
		},
		{
			name: "cycle beside a loop node",
			// write ↔ edit is a cycle of its own even though a loop is
			// also on a cycle with them.
			src: `
name: t
nodes:
  - {id: start, type: start}
  - {id: again, type: loop, config: {condition: "true", max_iterations: 2}}
  - {id: write, type: agent, config: {agent: writer}}
  - {id: edit, type: agent, config: {agent: editor}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: again}
  - {id: e2, source: again, target: write, sourceHandle: body}
  - {id: e3, source: write, target: edit}
  - {id: e4, source: edit, target: write}
  - {id: e5, source: edit, target: again}
  - {id: e6, source: again, target: end, sourceHandle: done}
`,
			want: []string{"nodes[2]"},
		},
		{
			name: "template reads a later node and a missing one",
			src: `
name: t
nodes:
  - {id: start, type: start}
  - {id: a, type: agent, config: {model: m, instructions: "{{nodes.ghost.output}}", prompt: "{{ nodes.b.output }}"}}
  - {id: b, type: agent, config: {agent: editor, prompt: "{{nodes.a.output}}"}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: a}
  - {id: e2, source: a, target: b}
  - {id: e3, source: b, target: end}
`,
			want: []string{"nodes[1].config.instructions", "nodes[1].config.prompt"},
		},
		{
			name: "template reads a sibling branch",
			src: `
name: t
nodes:
  - {id: start, type: start}
  - {id: a, type: agent, config: {agent: writer}}
  - {id: b, type: agent, config: {agent: editor, prompt: "Improve {{nodes.a.output}}"}}
  - {id: end, type: end, config: {output: "{{nodes.a.output}} {{nodes.b.output}}"}}
edges:
  - {id: e1, source: start, target: a}
  - {id: e2, source: start, target: b}
  - {id: e3, source: a, target: end}
  - {id: e4, source: b, target: end}
`,
			want: []string{"nodes[2].config.prompt"},
		},
		{
			name: "condition edges without true/false",
			src: `
name: t
nodes:
  - {id: start, type: start}
  - {id: c, type: condition, config: {expression: "len(input) > 10"}}
  - {id: a, type: agent, config: {agent: writer}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: c}
  - {id: e2, source: c, target: a}
  - {id: e3, source: c, target: end, sourceHandle: maybe}
  - {id: e4, source: a, target: end}
`,
			want: []string{"edges[1].sourceHandle", "edges[2].sourceHandle"},
		},
		{
			name: "loop edges without body or done",
			src: `
name: t
nodes:
  - {id: start, type: start}
  - {id: l, type: loop, config: {condition: "true"}}
  - {id: a, type: agent, config: {agent: writer}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: l}
  - {id: e2, source: l, target: a}
  - {id: e3, source: a, target: l}
  - {id: e4, source: l, target: end, sourceHandle: exit}
`,
			want: []string{"edges[1].sourceHandle", "edges[3].sourceHandle"},
		},
		{
			name: "router edge by an unknown route",
			src: `
name: t
nodes:
  - {id: start, type: start}
  - {id: r, type: router, config: {routes: [{name: billing, expression: "input contains 'invoice'"}, {name: tech, expression: "true"}]}}
  - {id: a, type: agent, config: {agent: billing}}
  - {id: b, type: agent, config: {agent: sales}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: r}
  - {id: e2, source: r, target: a, sourceHandle: billing}
  - {id: e3, source: r, target: b, sourceHandle: sales}
  - {id: e4, source: a, target: end}
  - {id: e5, source: b, target: end}
`,
			want: []string{"edges[2].sourceHandle"},
		},
		{
			name: "invalid expressions",
			src: `
name: t
nodes:
  - {id: start, type: start}
  - {id: c, type: condition, config: {expression: "score >"}}
  - {id: l, type: loop, config: {condition: "1 + 2", max_iterations: 0}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: c}
  - {id: e2, source: c, target: l, sourceHandle: "true"}
  - {id: e3, source: l, target: end, sourceHandle: done}
`,
			want: []string{"nodes[1].config.expression", "nodes[2].config.condition", "nodes[2].config.max_iterations"},
		},
		{
			name: "router routes broken",
			src: `
name: t
nodes:
  - {id: start, type: start}
  - {id: r, type: router, config: {default: other, routes: [{name: a, expression: "true"}, {name: b, expression: ")("}, {name: a}]}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: r}
  - {id: e2, source: r, target: end, sourceHandle: a}
`,
			want: []string{"nodes[1].config.routes[1].expression"},
		},
		{
			name: "router routes duplicate, without expression, bad default",
			src: `
name: t
nodes:
  - {id: start, type: start}
  - {id: r, type: router, config: {default: other, routes: [{name: a, expression: "true"}, {name: a}]}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: r}
  - {id: e2, source: r, target: end, sourceHandle: a}
`,
			want: []string{"nodes[1].config.routes[1].name", "nodes[1].config.routes[1].expression", "nodes[1].config.default"},
		},
		{
			name: "code node needs its mode's key and a valid regexp",
			src: `
name: t
nodes:
  - {id: start, type: start}
  - {id: x, type: code, config: {mode: regex_extract, pattern: "(unclosed"}}
  - {id: y, type: code, config: {mode: javascript}}
  - {id: z, type: code, config: {mode: shell}}
  - {id: s, type: code, config: {mode: starlark}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: x}
  - {id: e2, source: x, target: y}
  - {id: e3, source: y, target: z}
  - {id: e4, source: z, target: s}
  - {id: e5, source: s, target: end}
`,
			want: []string{"nodes[1].config.pattern", "nodes[2].config.script", "nodes[3].config.mode", "nodes[4].config.script"},
		},
		{
			name: "kinds without an executor yet",
			src: `
name: t
nodes:
  - {id: start, type: start}
  - {id: docs, type: rag, config: {knowledge_base: manuals}}
  - {id: remote, type: a2a-agent, config: {url: "https://agents.example.com/card"}}
  - {id: auto, type: teleport, config: {}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: docs}
  - {id: e2, source: docs, target: remote}
  - {id: e3, source: remote, target: auto}
  - {id: e4, source: auto, target: end}
`,
			want: []string{"nodes[3].type"}, // a2a-agent runs since the A2A client
		},
		{
			name: "unknown strategy and negative limits",
			src: chain + `
settings: {strategy: fastest, timeout: -5s, max_steps: -1}
`,
			want: []string{"settings.timeout", "settings.max_steps", "settings.strategy"},
		},
		{
			name: "single strategy with two agents",
			src: `
name: t
settings: {strategy: single}
nodes:
  - {id: start, type: start}
  - {id: a, type: agent, config: {agent: writer}}
  - {id: b, type: agent, config: {agent: editor}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: a}
  - {id: e2, source: a, target: b}
  - {id: e3, source: b, target: end}
`,
			want: []string{"settings.strategy"},
		},
		{
			name: "sequential strategy with a condition node",
			src: `
name: t
settings: {strategy: sequential}
nodes:
  - {id: start, type: start}
  - {id: c, type: condition, config: {expression: "true"}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: c}
  - {id: e2, source: c, target: end, sourceHandle: "true"}
`,
			want: []string{"settings.strategy"},
		},
		{
			name: "no name and an id templates cannot name",
			src: `
nodes:
  - {id: start, type: start}
  - {id: a.b, type: agent, config: {agent: writer}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: a.b}
  - {id: e2, source: a.b, target: end}
`,
			want: []string{"name", "nodes[1].id"},
		},
		{
			name: "many mistakes at once",
			src: `
name: t
settings: {strategy: concurrent}
nodes:
  - {id: start, type: start}
  - {id: plan, type: agent, config: {agent: planner, max_turns: 0}}
  - {id: gate, type: contract}
  - {id: plan, type: agent, config: {agent: writer}}
  - {id: lost, type: webhook}
  - {id: end, type: end, config: {output: "{{nodes.lost.output}}"}}
edges:
  - {id: e1, source: start, target: plan}
  - {id: e2, source: plan, target: gate}
  - {id: e2, source: gate, target: end}
  - {id: e3, source: gate, target: nowhere}
`,
			want: []string{
				"nodes[1].config.max_turns",
				"nodes[2].config.schema",
				"nodes[3].id",
				"nodes[4].type",
				"edges[2].id",
				"edges[3].target",
				"nodes[4]",
				"nodes[5].config.output",
			},
		},
	}
	reg := withUnavailable(t, builtins(t))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			probs := workflow.Validate(mustParse(t, tt.src), reg)
			if diff := cmp.Diff(tt.want, paths(probs)); diff != "" {
				t.Errorf("problem paths (-want +got):\n%s\ngot:\n%s", diff, list(probs))
			}
			for _, p := range probs {
				if p.Message == "" || p.Hint == "" {
					t.Errorf("problem without message or hint: %+v", p)
				}
			}
		})
	}
	if len(tests) < 20 {
		t.Errorf("only %d malformed definitions; the acceptance asks for at least 20", len(tests))
	}
}

// TestValidateMessages checks the wording a user acts on for the cases
// where the path alone does not say enough.
func TestValidateMessages(t *testing.T) {
	reg := withUnavailable(t, builtins(t))
	tests := []struct {
		name, src, path, wantMessage, wantHint string
	}{
		{
			name: "unavailable kind says so",
			src: `
name: t
nodes:
  - {id: start, type: start}
  - {id: auto, type: teleport, config: {}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: auto}
  - {id: e2, source: auto, target: end}
`,
			path: "nodes[1].type", wantMessage: `node type "teleport" is not available yet`, wantHint: "remove the node",
		},
		{
			name: "unknown type lists the known ones",
			src:  strings.Replace(chain, "type: agent, config: {agent: writer}", "type: agnet", 1),
			path: "nodes[1].type", wantMessage: `unknown node type "agnet"`, wantHint: "use one of: a2a-agent, agent, approval, autonomous, code, condition, contract, end,",
		},
		{
			name: "condition handle hint",
			src: `
name: t
nodes:
  - {id: start, type: start}
  - {id: c, type: condition, config: {expression: "true"}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: c}
  - {id: e2, source: c, target: end}
`,
			path: "edges[1].sourceHandle", wantMessage: `edge leaves condition node "c" without a sourceHandle`, wantHint: "true, false",
		},
		{
			name: "strategy rejection gives the reason",
			src:  strings.Replace(chain, "name: t", "name: t\nsettings: {strategy: concurrent}", 1),
			path: "settings.strategy", wantMessage: "concurrent needs at least two agent nodes, found 1",
		},
		{
			name: "invalid expression carries the compiler's reason",
			// The a→end edge then lacks a handle too; only the expression is asserted.
			src:  strings.Replace(chain, "type: agent, config: {agent: writer}", `type: condition, config: {expression: "score >"}`, 1),
			path: "nodes[1].config.expression", wantMessage: "invalid expression: unexpected token",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			probs := workflow.Validate(mustParse(t, tt.src), reg)
			for _, p := range probs {
				if p.Path != tt.path {
					continue
				}
				if !strings.Contains(p.Message, tt.wantMessage) || !strings.Contains(p.Hint, tt.wantHint) {
					t.Errorf("got %q (hint %q), want message containing %q and hint containing %q", p.Message, p.Hint, tt.wantMessage, tt.wantHint)
				}
				return
			}
			t.Errorf("no problem at %s; got:\n%s", tt.path, list(probs))
		})
	}
}

func TestValidateNilInputs(t *testing.T) {
	if got := paths(workflow.Validate(nil, builtins(t))); !cmp.Equal(got, []string{"definition"}) {
		t.Errorf("nil definition: got %v", got)
	}
	if got := paths(workflow.Validate(mustParse(t, chain), nil)); !cmp.Equal(got, []string{"definition"}) {
		t.Errorf("nil registry: got %v", got)
	}
}

func list(probs []workflow.Problem) string {
	var b strings.Builder
	for _, p := range probs {
		b.WriteString("  " + p.String() + "\n")
	}
	return b.String()
}
