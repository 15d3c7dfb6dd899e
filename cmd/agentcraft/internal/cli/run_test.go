package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/llm/llmtest"
)

// inTempDir moves the test into a fresh directory holding the given files
// and an agentcraft.yaml with the given providers section, so that the
// database and master key land there.
func inTempDir(t *testing.T, providers string, files map[string]string) {
	t.Helper()
	dir := t.TempDir()
	t.Chdir(dir)
	cfg := "database:\n  url: sqlite://" + filepath.Join(dir, "agentcraft.db") + "\ndetect_providers: false\n" + providers
	files["agentcraft.yaml"] = cfg
	for name, src := range files {
		if err := os.WriteFile(name, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

const codeOnly = `
name: greet
nodes:
  - {id: start, type: start}
  - {id: hello, type: code, config: {mode: template, template: "{{vars.greeting}} {{input.name}}"}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: hello}
  - {id: e2, source: hello, target: end}
`

func TestRunCodeOnly(t *testing.T) {
	inTempDir(t, "", map[string]string{"wf.yaml": codeOnly})
	code, out, errOut := run(t, "run", "wf.yaml", "--input", `{"name": "Ada"}`, "--var", "greeting=Hello")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	if out != "Hello Ada\n" {
		t.Errorf("stdout = %q, want the output string as is", out)
	}
	for _, want := range []string{"▶ hello (code)", "✓ hello "} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}

func TestRunPrintsStructuredOutputAsJSON(t *testing.T) {
	wf := `
name: split
nodes:
  - {id: start, type: start}
  - {id: words, type: code, config: {mode: split, separator: " "}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: words}
  - {id: e2, source: words, target: end}
`
	inTempDir(t, "", map[string]string{"wf.yaml": wf})
	// Text that is not JSON is the input as is.
	code, out, errOut := run(t, "run", "wf.yaml", "--input", "a b")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	if want := "[\n  \"a\",\n  \"b\"\n]\n"; out != want {
		t.Errorf("stdout = %q, want %q", out, want)
	}
}

func TestRunFailedOutputCheck(t *testing.T) {
	wf := `
name: checked
nodes:
  - {id: start, type: start}
  - {id: check, type: output_check, config: {required: [title]}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: check}
  - {id: e2, source: check, target: end}
`
	inTempDir(t, "", map[string]string{"wf.yaml": wf})
	code, out, errOut := run(t, "run", "wf.yaml", "--input", `{"body": "text"}`)
	if code == 0 {
		t.Fatalf("a failed output check exited 0; stdout %q", out)
	}
	if out != "" {
		t.Errorf("a failed run printed output: %q", out)
	}
	for _, want := range []string{"failed_contract", "title", "✗ check"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}

func TestRunAgentAgainstFakeProvider(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.Turn{Text: "hi there"})
	wf := `
name: ask
nodes:
  - {id: start, type: start}
  - {id: a, type: agent, config: {model: fake/m, instructions: "Be brief."}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: a}
  - {id: e2, source: a, target: end}
`
	providers := "providers:\n  - {name: fake, type: openai, base_url: \"" + srv.URL + "/v1\", api_key: test}\n"
	inTempDir(t, providers, map[string]string{"wf.yaml": wf})
	code, out, errOut := run(t, "run", "wf.yaml", "--input", "hello")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	if out != "hi there\n" {
		t.Errorf("stdout = %q, want the agent's answer", out)
	}
	if !strings.Contains(errOut, "▶ a (agent)") || !strings.Contains(errOut, deltaIndent+"hi there") {
		t.Errorf("stderr lacks the node start or the indented streamed text:\n%s", errOut)
	}
}

func TestRunWaitingOnHumanFails(t *testing.T) {
	wf := `
name: approve
nodes:
  - {id: start, type: start}
  - {id: ok, type: human, config: {prompt: "Approve?"}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: ok}
  - {id: e2, source: ok, target: end}
`
	inTempDir(t, "", map[string]string{"wf.yaml": wf})
	code, _, errOut := run(t, "run", "wf.yaml")
	if code == 0 {
		t.Fatal("a run parked on a human node exited 0")
	}
	for _, want := range []string{"⏸ waiting for input at ok: Approve?", "agentcraft serve"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}

func TestRunInvalidWorkflow(t *testing.T) {
	inTempDir(t, "", map[string]string{"wf.yaml": "name: t\nnodes: [{id: a, type: agnet}]\n"})
	code, _, errOut := run(t, "run", "wf.yaml")
	if code == 0 || !strings.Contains(errOut, `nodes[0].type: unknown node type "agnet"`) {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
}

func TestRunBadVar(t *testing.T) {
	inTempDir(t, "", map[string]string{"wf.yaml": codeOnly})
	code, _, errOut := run(t, "run", "wf.yaml", "--var", "novalue")
	if code == 0 || !strings.Contains(errOut, "NAME=VALUE") {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
}

func TestLintMalformed(t *testing.T) {
	wf := `
name: broken
nodes:
  - {id: start, type: start}
  - {id: a, type: agnet}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: a}
  - {id: e2, source: a, target: ghost}
`
	inTempDir(t, "", map[string]string{"wf.yaml": wf})
	code, out, errOut := run(t, "lint", "wf.yaml")
	if code == 0 {
		t.Fatalf("lint of a malformed file exited 0:\n%s", out)
	}
	for _, want := range []string{
		`nodes[1].type: unknown node type "agnet" (hint: use one of:`,
		`edges[1].target: edge target "ghost" is not a node of this workflow (hint: `,
		`nodes[2]: node "end" is not reachable from start (hint: `,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "3 problems") {
		t.Errorf("stderr does not count the problems:\n%s", errOut)
	}
}

func TestLintUnreadable(t *testing.T) {
	inTempDir(t, "", map[string]string{"bad.json": `{"name": "t", "nodes": [}`})
	for file, want := range map[string]string{
		"bad.json":     "bad.json: workflow: parse json: line 1, column 25",
		"missing.yaml": "read workflow: open missing.yaml",
	} {
		code, _, errOut := run(t, "lint", file)
		if code == 0 || !strings.Contains(errOut, want) {
			t.Errorf("lint %s: exit %d, stderr %q, want %q", file, code, errOut, want)
		}
	}
}

func TestLintWarningsExitZero(t *testing.T) {
	wf := `
name: fixed
nodes:
  - {id: start, type: start}
  - {id: c, type: code, config: {mode: template, template: "no summary"}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: c}
  - {id: e2, source: c, target: end}
`
	inTempDir(t, "", map[string]string{"wf.yaml": wf})
	code, out, errOut := run(t, "lint", "wf.yaml")
	if code != 0 {
		t.Fatalf("warnings alone exited %d:\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		`warning: nodes[1].config.template: code node "c" has a template without any {{reference}}`,
		"(hint: reference the data",
		"ok: fixed: 3 nodes, strategy imperative",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
}

// TestLintWithConfigChecksAgents: with --config, an agent node naming an
// agent the configuration lacks is a problem; one it has is fine.
func TestLintWithConfigChecksAgents(t *testing.T) {
	wf := func(agent string) string {
		return `
name: asks
nodes:
  - {id: start, type: start}
  - {id: a, type: agent, config: {agent: ` + agent + `}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: a}
  - {id: e2, source: a, target: end}
`
	}
	cfg := `
detect_providers: false
providers: [{name: up, type: openai, base_url: "http://127.0.0.1:9/v1", api_key: k}]
agents: [{name: helper, model: up/m}]
`
	inTempDir(t, "", map[string]string{"good.yaml": wf("helper"), "bad.yaml": wf("helpr"), "ac.yaml": cfg})
	if code, out, errOut := run(t, "lint", "good.yaml", "--config", "ac.yaml"); code != 0 {
		t.Errorf("lint of a workflow naming a configured agent exited %d:\n%s%s", code, out, errOut)
	}
	code, out, _ := run(t, "lint", "bad.yaml", "--config", "ac.yaml")
	if code == 0 || !strings.Contains(out, "nodes[1].config.agent") || !strings.Contains(out, "helpr") {
		t.Errorf("lint of a workflow naming an unknown agent: exit %d, stdout:\n%s", code, out)
	}
	// Without --config there is nothing to check the name against.
	if code, out, errOut := run(t, "lint", "bad.yaml"); code != 0 {
		t.Errorf("lint without --config exited %d:\n%s%s", code, out, errOut)
	}
}
