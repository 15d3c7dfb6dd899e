package workflow_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/workflow"
)

// TestLint checks each warning on a definition that has the mistake and on
// the same definition without it. Every definition must also validate, so
// that the warnings are about runnable workflows.
func TestLint(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string // paths of the warnings
		msg  string   // a fragment of the first warning's message
		hint string   // a fragment of the first warning's hint
	}{
		{
			name: "implicit input after start with a normalize node",
			src: `
name: t
nodes:
  - {id: start, type: start}
  - {id: norm, type: normalize, config: {defaults: {tone: neutral}}}
  - {id: a, type: agent, config: {agent: writer}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: norm}
  - {id: e2, source: start, target: a}
  - {id: e3, source: norm, target: end}
  - {id: e4, source: a, target: end}
`,
			want: []string{"nodes[2].config.prompt"},
			msg:  `node "a" reads the raw run input from start, bypassing the defaults of normalize node "norm"`,
			hint: "{{nodes.norm.output.normalized}}",
		},
		{
			name: "explicit {{input}} after start with a normalize node",
			src: `
name: t
nodes:
  - {id: start, type: start}
  - {id: norm, type: normalize, config: {defaults: {tone: neutral}}}
  - {id: c, type: code, config: {mode: template, template: "x {{input}}", input: "{{ input.topic }}"}}
  - {id: end, type: end, config: {output: "{{nodes.norm.output}} {{nodes.c.output}}"}}
edges:
  - {id: e1, source: start, target: norm}
  - {id: e2, source: start, target: c}
  - {id: e3, source: norm, target: end}
  - {id: e4, source: c, target: end}
`,
			want: []string{"nodes[2].config.input"},
			msg:  "raw run input",
		},
		{
			name: "nodes.start.output downstream of normalize",
			src: `
name: t
nodes:
  - {id: begin, type: start}
  - {id: norm, type: normalize, config: {defaults: {tone: neutral}}}
  - {id: a, type: agent, config: {agent: writer, prompt: "write about {{nodes.begin.output.topic}}"}}
  - {id: end, type: end}
edges:
  - {id: e1, source: begin, target: norm}
  - {id: e2, source: norm, target: a}
  - {id: e3, source: a, target: end}
`,
			want: []string{"nodes[2].config.prompt"},
			msg:  `node "a" reads the raw run input from start`,
			hint: "{{nodes.norm.output.normalized}}",
		},
		{
			name: "normalized reads are clean",
			src: `
name: t
nodes:
  - {id: start, type: start}
  - {id: norm, type: normalize, config: {defaults: {tone: neutral}}}
  - {id: a, type: agent, config: {agent: writer, prompt: "{{nodes.norm.output.normalized.topic}}"}}
  - {id: b, type: agent, config: {agent: writer}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: norm}
  - {id: e2, source: norm, target: a}
  - {id: e3, source: a, target: b}
  - {id: e4, source: b, target: end}
`,
		},
		{
			name: "a normalize node of an agent's answer does not count",
			src: `
name: t
nodes:
  - {id: start, type: start}
  - {id: plan, type: agent, config: {agent: planner, prompt: "Plan: {{input}}"}}
  - {id: norm, type: normalize, config: {defaults: {tone: neutral}}}
  - {id: end, type: end, config: {output: "{{nodes.norm.output.normalized}} for {{nodes.start.output}}"}}
edges:
  - {id: e1, source: start, target: plan}
  - {id: e2, source: plan, target: norm}
  - {id: e3, source: norm, target: end}
`,
		},
		{
			name: "normalize reading start by reference counts",
			src: `
name: t
nodes:
  - {id: start, type: start}
  - {id: a, type: agent, config: {agent: writer}}
  - {id: norm, type: normalize, config: {source: "{{nodes.start.output}}", defaults: {tone: neutral}}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: a}
  - {id: e2, source: a, target: norm}
  - {id: e3, source: norm, target: end}
`,
			want: []string{"nodes[1].config.prompt"},
			hint: `{{nodes.norm.output.normalized}} (or a field below it), and connect node "a" after "norm"`,
		},
		{
			name: "reading start is fine without a normalize node",
			src: `
name: t
nodes:
  - {id: start, type: start}
  - {id: a, type: agent, config: {agent: writer}}
  - {id: b, type: agent, config: {agent: writer, prompt: "{{nodes.start.output}} and {{input}}"}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: a}
  - {id: e2, source: a, target: b}
  - {id: e3, source: b, target: end}
`,
		},
		{
			name: "sibling of a contract reads the agent's raw text",
			src: `
name: t
nodes:
  - {id: start, type: start}
  - {id: draft, type: agent, config: {agent: writer}}
  - {id: check, type: contract, config: {schema: {type: object}}}
  - {id: review, type: agent, config: {agent: reviewer}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: draft}
  - {id: e2, source: draft, target: check}
  - {id: e3, source: draft, target: review}
  - {id: e4, source: check, target: end}
  - {id: e5, source: review, target: end}
settings: {strategy: handoff}
`,
			want: []string{"nodes[3].config.prompt"},
			msg:  `node "review" reads the raw text of agent "draft", which contract node "check" checks`,
			hint: `{{nodes.check.output.normalized}}, and connect node "review" after "check"`,
		},
		{
			name: "template reads an agent whose output a contract checks",
			src: `
name: t
nodes:
  - {id: start, type: start}
  - {id: draft, type: agent, config: {agent: writer}}
  - {id: check, type: contract, config: {schema: {type: object}}}
  - {id: publish, type: agent, config: {agent: publisher, prompt: "publish {{nodes.draft.output}}"}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: draft}
  - {id: e2, source: draft, target: check}
  - {id: e3, source: check, target: publish}
  - {id: e4, source: publish, target: end}
`,
			want: []string{"nodes[3].config.prompt"},
			msg:  `reads the raw text of agent "draft"`,
			hint: "as {{nodes.check.output.normalized}}",
		},
		{
			name: "reading the contract's output is clean",
			src: `
name: t
nodes:
  - {id: start, type: start}
  - {id: draft, type: agent, config: {agent: writer}}
  - {id: clean, type: code, config: {mode: regex_replace, pattern: "^` + "```" + `json", input: "{{nodes.draft.output}}"}}
  - {id: check, type: contract, config: {schema: {type: object}}}
  - {id: publish, type: agent, config: {agent: publisher, prompt: "publish {{nodes.check.output.normalized}}"}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: draft}
  - {id: e2, source: draft, target: clean}
  - {id: e3, source: clean, target: check}
  - {id: e4, source: check, target: publish}
  - {id: e5, source: publish, target: end}
`,
		},
		{
			name: "reading an agent without a contract is clean",
			src: `
name: t
nodes:
  - {id: start, type: start}
  - {id: draft, type: agent, config: {agent: writer}}
  - {id: publish, type: agent, config: {agent: publisher, prompt: "publish {{nodes.draft.output}}"}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: draft}
  - {id: e2, source: draft, target: publish}
  - {id: e3, source: publish, target: end}
`,
		},
		{
			name: "javascript fallbacks",
			src: `
name: t
nodes:
  - {id: start, type: start}
  - {id: a, type: code, config: {mode: javascript, script: "input.title || \"Untitled\""}}
  - {id: b, type: code, config: {mode: javascript, script: "input.tags ?? []"}}
  - {id: c, type: code, config: {mode: javascript, script: "input.items || [ ]"}}
  - {id: d, type: code, config: {mode: javascript, script: "input.name or 'anon'"}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: a}
  - {id: e2, source: a, target: b}
  - {id: e3, source: b, target: c}
  - {id: e4, source: c, target: d}
  - {id: e5, source: d, target: end}
`,
			want: []string{"nodes[1].config.script", "nodes[2].config.script", "nodes[3].config.script", "nodes[4].config.script"},
			msg:  `code node "a" falls back to a fixed value (|| "Untitled")`,
			hint: "fail loudly",
		},
		{
			name: "constant template",
			src: `
name: t
nodes:
  - {id: start, type: start}
  - {id: a, type: code, config: {mode: template, template: "no summary available"}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: a}
  - {id: e2, source: a, target: end}
`,
			want: []string{"nodes[1].config.template"},
			msg:  "same fixed text on every run",
		},
		{
			name: "code without fallbacks is clean",
			src: `
name: t
nodes:
  - {id: start, type: start}
  - {id: a, type: code, config: {mode: javascript, script: "if (!input.title) throw new Error('no title'); input.a || input.b"}}
  - {id: b, type: code, config: {mode: template, template: "Title: {{input}}"}}
  - {id: c, type: code, config: {mode: arithmetic, expression: "input * 2"}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: a}
  - {id: e2, source: a, target: b}
  - {id: e3, source: b, target: c}
  - {id: e4, source: c, target: end}
`,
		},
	}
	reg := builtins(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			def := mustParse(t, tt.src)
			if probs := workflow.Validate(def, reg); len(probs) > 0 {
				t.Fatalf("the definition must validate:\n%s", list(probs))
			}
			got := workflow.Lint(def, reg)
			paths := []string{}
			for _, w := range got {
				paths = append(paths, w.Path)
			}
			want := tt.want
			if want == nil {
				want = []string{}
			}
			if diff := cmp.Diff(want, paths); diff != "" {
				t.Fatalf("warning paths (-want +got):\n%s\nwarnings:\n%s", diff, warnList(got))
			}
			if len(got) == 0 {
				return
			}
			if !strings.Contains(got[0].Message, tt.msg) {
				t.Errorf("message %q does not contain %q", got[0].Message, tt.msg)
			}
			if !strings.Contains(got[0].Hint, tt.hint) {
				t.Errorf("hint %q does not contain %q", got[0].Hint, tt.hint)
			}
		})
	}
}

// TestLintInvalid checks that Lint does not fail on definitions Validate
// rejects, and still reports what it can judge.
func TestLintInvalid(t *testing.T) {
	reg := builtins(t)
	if w := workflow.Lint(nil, reg); w != nil {
		t.Errorf("Lint(nil) = %v", w)
	}
	def := mustParse(t, `
name: t
nodes:
  - {id: start, type: start}
  - {id: a, type: nosuchkind}
  - {id: a, type: code, config: {mode: template, template: fixed}}
  - {id: b, type: code, config: {mode: template, template: fixed}}
edges:
  - {id: e1, source: start, target: a}
  - {id: e2, source: ghost, target: b}
`)
	got := workflow.Lint(def, reg)
	if len(got) != 1 || got[0].Path != "nodes[3].config.template" {
		t.Fatalf("want one warning about nodes[3], got:\n%s", warnList(got))
	}
}

func warnList(ws []workflow.Warning) string {
	var b strings.Builder
	for _, w := range ws {
		b.WriteString(w.String() + "\n")
	}
	return b.String()
}
