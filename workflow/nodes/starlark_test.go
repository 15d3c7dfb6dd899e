package nodes_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/workflowtest"
)

// TestStarlarkCodeNodeFails: a Starlark fault fails the run with the
// node, the script's position and its message, and nothing after it runs.
func TestStarlarkCodeNodeFails(t *testing.T) {
	src := `{"name":"w","nodes":[{"id":"start","type":"start"},
	{"id":"pick","type":"code","config":{"mode":"starlark","script":"total = 0\nresult = input['missing']"}},
	{"id":"after","type":"code","config":{"mode":"template","template":"ran"}},{"id":"end","type":"end"}],
	"edges":[{"id":"e1","source":"start","target":"pick"},{"id":"e2","source":"pick","target":"after"},{"id":"e3","source":"after","target":"end"}]}`
	out, rec, _ := run(t, src, map[string]any{"present": 1.0})
	if out.Status != workflow.StatusFailed {
		t.Fatalf("status %s, want failed", out.Status)
	}
	for _, want := range []string{"pick", `script.star:2:15: key "missing" not in dict`} {
		if !strings.Contains(out.Error, want) {
			t.Errorf("run error %q does not contain %q", out.Error, want)
		}
	}
	for _, ev := range rec.Types("after") {
		if ev == workflow.EventNodeFinished {
			t.Error("the node after the failing script ran")
		}
	}
}

// TestStarlarkCodeHooks: code hooks take the code node's modes, so
// starlark runs at every hook point: on_input cleans the input, pre_agent
// builds the prompt, post_agent and on_complete reshape the answer.
func TestStarlarkCodeHooks(t *testing.T) {
	src := `{"name":"w","hooks":{
	  "on_input":[{"type":"code","mode":"starlark","script":"result = ' '.join(input.split())"}],
	  "pre_agent":[{"type":"code","mode":"starlark","script":"result = 'Answer in %s: %s' % (vars['lang'], input)"}],
	  "post_agent":[{"type":"code","mode":"starlark","timeout":"2s","script":"result = input.strip().upper()"}],
	  "on_complete":[{"type":"code","mode":"starlark","script":"result = {'answer': input, 'words': len(input.split())}"}]},
	"nodes":[{"id":"start","type":"start"},{"id":"a","type":"agent","config":{"model":"m"}},{"id":"end","type":"end"}],
	"edges":[{"id":"e1","source":"start","target":"a"},{"id":"e2","source":"a","target":"end"}]}`
	res := workflowtest.NewResolver(t, llmtest.Turn{Text: "  green tea  "})
	e := workflowtest.Engine(t, workflow.Services{Agents: res})
	p := workflowtest.Parse(t, e, src)
	out := e.Run(t.Context(), p, workflow.Request{RunID: "r1", Input: "  which   tea? ", Vars: map[string]any{"lang": "English"}})
	if out.Status != workflow.StatusSucceeded {
		t.Fatalf("status %s (error %q)", out.Status, out.Error)
	}
	if diff := cmp.Diff(map[string]any{"answer": "GREEN TEA", "words": 2.0}, out.Output); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	reqs := res.LLM.Requests()
	if len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), "Answer in English: which tea?") {
		t.Errorf("the model did not get the prompt the hooks built: %s", reqs[0].Body)
	}

	// A failing Starlark hook fails the run, naming the hook.
	bad := strings.Replace(src, `"result = ' '.join(input.split())"`, `"result = input.nope()"`, 1)
	p = workflowtest.Parse(t, e, bad)
	out = e.Run(t.Context(), p, workflow.Request{RunID: "r2", Input: "x", Vars: map[string]any{"lang": "English"}})
	if out.Status != workflow.StatusFailed || !strings.Contains(out.Error, "on_input[0]") || !strings.Contains(out.Error, "has no .nope field or method") {
		t.Errorf("failing hook: status %s, error %q; want failed naming on_input[0] and the script's error", out.Status, out.Error)
	}
}
