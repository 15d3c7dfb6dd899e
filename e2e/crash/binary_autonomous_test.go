package crash

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/store"
)

// TestBinaryAutonomousAskUser: an autonomous node calls a tool, then
// ask_user parks the run; the server is killed and restarted, the answer
// arrives through POST /api/runs/{id}/resume, and the agent finishes. The
// journal replays the steps before the question: three model requests in
// all, none repeated, and the calculator's result reaches the last step.
func TestBinaryAutonomousAskUser(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fake := llmtest.NewOpenAI(t,
		llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "calculator", Arguments: `{"expression":"120*3"}`}}},
		llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "q1", Name: "ask_user", Arguments: `{"question":"Which city should the 360 yen go to?"}`}}},
		llmtest.Turn{Text: "Sent 360 yen to Kyoto."},
	)
	cfg := binConfig{dir: dir, dbURL: "sqlite://" + filepath.Join(dir, "agentcraft.db"), llmURL: fake.URL}
	addr := freeAddr(t)
	p1 := startServe(t, "serve#1", cfg, addr)
	def := `{"name":"auto","nodes":[{"id":"start","type":"start"},
{"id":"agent","type":"autonomous","config":{"model":"fake/fake-model","tools":["calculator"],"goal":"{{input}}"}},
{"id":"end","type":"end"}],
"edges":[{"id":"e1","source":"start","target":"agent"},{"id":"e2","source":"agent","target":"end"}]}`
	var wf store.Workflow
	api(t, addr, "POST", "/api/workflows", def, http.StatusCreated, &wf)
	var run store.Run
	api(t, addr, "POST", "/api/workflows/"+wf.ID+"/runs", `{"input": "Send three times 120 yen to the right city."}`, http.StatusAccepted, &run)
	get := func() store.Run {
		var r store.Run
		api(t, addr, "GET", "/api/runs/"+run.ID, "", http.StatusOK, &r)
		return r
	}
	eventually(t, 15*time.Second, "the run parked on ask_user", func() bool { return get().Status == store.RunWaiting })
	if r := get(); r.WaitingNode != "agent!root:ask2.0" {
		t.Errorf("waiting on %q, want the journal entry of the question", r.WaitingNode)
	}
	p1.kill()

	startServe(t, "serve#2", cfg, addr)
	if r := get(); r.Status != store.RunWaiting {
		t.Fatalf("after the restart the run is %s (%q), want waiting", r.Status, r.Error)
	}
	api(t, addr, "POST", "/api/runs/"+run.ID+"/resume", `{"input": "Kyoto"}`, http.StatusAccepted, nil)
	eventually(t, 15*time.Second, "the run finishing", func() bool { return get().Status.Final() })
	final := get()
	var out string
	_ = json.Unmarshal(final.Output, &out)
	if final.Status != store.RunSucceeded || out != "Sent 360 yen to Kyoto." {
		t.Fatalf("run = %s (%q), output %s", final.Status, final.Error, final.Output)
	}
	reqs := fake.Requests()
	if len(reqs) != 3 {
		t.Fatalf("model requests = %d, want 3: the steps before the question are replayed, not repeated", len(reqs))
	}
	last := string(reqs[2].Body)
	if !strings.Contains(last, "The user answered: Kyoto") || !strings.Contains(last, "360") {
		t.Errorf("the last step lacks the answer or the tool's result: %s", last)
	}
	// Every step was an event the user can read.
	_, body := apiDo(t, addr, "GET", "/api/runs/"+run.ID+"/events", "")
	for _, want := range []string{`"type":"agent_step"`, `"tool_call"`, `"ask"`, `"answer"`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("run events lack %s: %s", want, body)
		}
	}
}
