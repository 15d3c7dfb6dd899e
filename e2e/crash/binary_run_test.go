package crash

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/store"
)

// humanHookFlow: an agent node (the fake LLM), a human node, a template
// node, with webhook hooks after the agent and at completion.
func humanHookFlow(hooks string) string {
	return `{"name":"approve","nodes":[{"id":"start","type":"start"},
{"id":"draft","type":"agent","config":{"model":"fake/fake-model","prompt":"Draft: {{input}}"}},
{"id":"ok","type":"human","config":{"prompt":"Approve {{nodes.draft.output}}?"}},
{"id":"final","type":"code","config":{"mode":"template","template":"{{nodes.draft.output}} [{{nodes.ok.output}}]"}},
{"id":"end","type":"end"}],
"edges":[{"id":"e1","source":"start","target":"draft"},{"id":"e2","source":"draft","target":"ok"},
{"id":"e3","source":"ok","target":"final"},{"id":"e4","source":"final","target":"end"}],
"hooks":{"post_agent":[{"type":"webhook","url":` + jsonString(hooks+"/post_agent") + `,"required":true}],
"on_complete":[{"type":"webhook","url":` + jsonString(hooks+"/on_complete") + `,"required":true}]}}`
}

// TestBinaryAgentHumanHooks kills the real `agentcraft serve` (SQLite)
// twice in one run: while its agent node waits on the model (a stalled
// stream), and while the run waits at a human node. The agent node must
// run again exactly once (two model requests in all), the run must park
// at the human node across the second kill and resume through
// POST /api/runs/{id}/resume, and each webhook hook must be delivered
// once for its event.
func TestBinaryAgentHumanHooks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	llm := llmtest.NewOpenAI(t,
		llmtest.Turn{Text: "never finished", Fault: &llmtest.Fault{AfterChunks: 1, Stall: time.Minute}},
		llmtest.Turn{Text: "A memo."},
	)
	hooks := &hookReceiver{hits: map[string]int{}}
	hsrv := httptest.NewServer(hooks)
	t.Cleanup(hsrv.Close)
	cfg := binConfig{dir: dir, dbURL: "sqlite://" + filepath.Join(dir, "agentcraft.db"), llmURL: llm.URL}
	addr := freeAddr(t)

	// 1. The agent node is in flight: the model's stream has stalled.
	p1 := startServe(t, "serve#1", cfg, addr)
	var wf store.Workflow
	api(t, addr, "POST", "/api/workflows", humanHookFlow(hsrv.URL), http.StatusCreated, &wf)
	var run store.Run
	api(t, addr, "POST", "/api/workflows/"+wf.ID+"/runs", `{"input": "budget"}`, http.StatusAccepted, &run)
	eventually(t, 15*time.Second, "the agent node's model request", func() bool { return llm.Active() == 1 })
	killedAt := time.Now()
	p1.kill()

	// 2. Restarted, serve resumes the run: the agent node runs again and
	// the run parks at the human node.
	p2 := startServe(t, "serve#2", cfg, addr)
	get := func() store.Run {
		var r store.Run
		api(t, addr, "GET", "/api/runs/"+run.ID, "", http.StatusOK, &r)
		return r
	}
	eventually(t, 15*time.Second, "the run waiting at the human node", func() bool { return get().Status == store.RunWaiting })
	t.Logf("kill during the agent node → run parked at the human node after restart: %v", time.Since(killedAt).Round(time.Millisecond))
	if r := get(); r.WaitingNode != "ok" {
		t.Errorf("waiting node = %q, want ok", r.WaitingNode)
	}
	p2.kill()

	// 3. The waiting run survives the kill and resumes through the API.
	startServe(t, "serve#3", cfg, addr)
	if r := get(); r.Status != store.RunWaiting {
		t.Fatalf("after the kill at the human node the run is %s (%q), want waiting", r.Status, r.Error)
	}
	var resumed struct {
		store.Run
		Resumed bool `json:"resumed"`
	}
	api(t, addr, "POST", "/api/runs/"+run.ID+"/resume", `{"input": "approved"}`, http.StatusAccepted, &resumed)
	if !resumed.Resumed {
		t.Errorf("resume answered %+v, want resumed", resumed)
	}
	eventually(t, 15*time.Second, "the run succeeding", func() bool { return get().Status.Final() })
	final := get()
	var out string
	_ = json.Unmarshal(final.Output, &out)
	if final.Status != store.RunSucceeded || !strings.Contains(out, "A memo.") || !strings.Contains(out, "approved") {
		t.Errorf("run = %s (%q), output %s; want succeeded with the memo and the answer", final.Status, final.Error, final.Output)
	}

	// The agent node ran twice: the killed attempt and one more.
	if n := len(llm.Requests()); n != 2 {
		t.Errorf("model requests = %d, want 2 (the attempt killed in flight, then exactly one re-run)", n)
	}
	// Each hook once per event: post_agent of the node execution that
	// finished (the killed one never got there), on_complete once.
	for path, key := range map[string]string{"/post_agent": run.ID + "/post_agent[0]/draft", "/on_complete": run.ID + "/on_complete[0]"} {
		if got := hooks.deliveries(path); len(got) != 1 || got[key] != 1 {
			t.Errorf("%s deliveries = %v, want {%s: 1}", path, got, key)
		}
	}
}
