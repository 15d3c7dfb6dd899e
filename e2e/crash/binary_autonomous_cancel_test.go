package crash

import (
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/store"
)

// TestBinaryAutonomousCancel: an autonomous node spawns three sub-agents
// whose model calls are in flight; POST /api/runs/{id}/cancel stops the
// whole tree: the run is canceled within a second and the fake provider
// gets no request after the cancel.
func TestBinaryAutonomousCancel(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fake := llmtest.NewOpenAI(t,
		llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "create_agent", Arguments: `{"name":"worker","instructions":"Work."}`}}},
		llmtest.Turn{ToolCalls: []llm.ToolCall{
			{ID: "s1", Name: "spawn_agent", Arguments: `{"name":"worker","task":"job 1"}`},
			{ID: "s2", Name: "spawn_agent", Arguments: `{"name":"worker","task":"job 2"}`},
			{ID: "s3", Name: "spawn_agent", Arguments: `{"name":"worker","task":"job 3"}`}}},
		llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "c4", Name: "collect_results", Arguments: `{}`}}},
	)
	var mu sync.Mutex
	var times []time.Time
	fake.Respond(func(body []byte) (llmtest.Turn, bool) {
		mu.Lock()
		times = append(times, time.Now())
		mu.Unlock()
		if !strings.Contains(string(body), "You are a sub-agent") {
			return llmtest.Turn{}, false
		}
		// The sub-agents' model calls answer only after a minute, or
		// end when the caller goes away.
		return llmtest.Turn{Text: "late", Fault: &llmtest.Fault{Stall: time.Minute}}, true
	})
	cfg := binConfig{dir: dir, dbURL: "sqlite://" + filepath.Join(dir, "agentcraft.db"), llmURL: fake.URL}
	addr := freeAddr(t)
	startServe(t, "serve", cfg, addr)
	def := `{"name":"auto","nodes":[{"id":"start","type":"start"},
{"id":"agent","type":"autonomous","config":{"model":"fake/fake-model","goal":"{{input}}"}},
{"id":"end","type":"end"}],
"edges":[{"id":"e1","source":"start","target":"agent"},{"id":"e2","source":"agent","target":"end"}]}`
	var wf store.Workflow
	api(t, addr, "POST", "/api/workflows", def, http.StatusCreated, &wf)
	var run store.Run
	api(t, addr, "POST", "/api/workflows/"+wf.ID+"/runs", `{"input": "Do three jobs."}`, http.StatusAccepted, &run)
	// In flight and stamped: the fake counts a request active before its
	// responder (which stamps it) has read the body.
	eventually(t, 15*time.Second, "three sub-agents' model calls in flight", func() bool {
		mu.Lock()
		stamped := len(times)
		mu.Unlock()
		return fake.Active() == 3 && stamped == 6
	})

	canceled := time.Now()
	api(t, addr, "POST", "/api/runs/"+run.ID+"/cancel", "", http.StatusOK, nil)
	eventually(t, time.Second, "every upstream call of the tree ended", func() bool { return fake.Active() == 0 })
	t.Logf("cancel → no upstream call in flight: %v", time.Since(canceled).Round(time.Millisecond))
	var got store.Run
	api(t, addr, "GET", "/api/runs/"+run.ID, "", http.StatusOK, &got)
	if got.Status != store.RunCanceled {
		t.Fatalf("run is %s, want canceled", got.Status)
	}
	time.Sleep(500 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	for _, at := range times {
		if at.After(canceled) {
			t.Errorf("an upstream request arrived %v after the cancel", at.Sub(canceled))
		}
	}
	if len(times) != 6 {
		t.Errorf("%d upstream requests, want 6 (3 root steps, 3 sub-agents)", len(times))
	}
}
