package crash

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/store"
)

// flowPlan is the planner's answer: five steps of four kinds, one edge
// missing (draft → trim), which the gate repairs.
const flowPlan = "```json\n" + `{"nodes":[
 {"id":"draft","kind":"agent","config":{"prompt":"Write a one-line motto about {{input}}"}},
 {"id":"trim","kind":"code","config":{"mode":"text","operation":"trim"}},
 {"id":"long","kind":"condition","config":{"expression":"len(input) > 5"}},
 {"id":"shout","kind":"code","config":{"mode":"text","operation":"upper"}},
 {"id":"sign","kind":"code","config":{"mode":"template","template":"{{input}} (AgentCraft)"}}],
"edges":[{"from":"trim","to":"long"},{"from":"long","to":"shout","when":"true"},{"from":"shout","to":"sign"}]}` + "\n```"

// TestBinaryFlowCrystallize: POST /api/planner/stream plans a goal (one
// planner call), the plan runs as a durable workflow run and streams plan,
// steps and answer; the run is crystallized into a workflow that passes
// `agentcraft lint` and runs again with no planner call, giving the same
// output.
func TestBinaryFlowCrystallize(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fake := llmtest.NewOpenAI(t)
	var planned, drafted atomic.Int32
	fake.Respond(func(body []byte) (llmtest.Turn, bool) {
		if strings.Contains(string(body), "You are a planner") {
			planned.Add(1)
			return llmtest.Turn{Text: flowPlan}, true
		}
		drafted.Add(1)
		return llmtest.Turn{Text: "  small binaries win  "}, true
	})
	cfg := binConfig{dir: dir, dbURL: "sqlite://" + filepath.Join(dir, "agentcraft.db"), llmURL: fake.URL}
	addr := freeAddr(t)
	startServe(t, "serve", cfg, addr)

	req, _ := http.NewRequest("POST", "http://"+addr+"/api/planner/stream",
		strings.NewReader(`{"goal":"a motto for small software","model":"fake/fake-model","planner":"fake/fake-model"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("planner stream: %s", resp.Status)
	}
	var events []string
	var runID, answer string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	var event string
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "event: "); ok {
			event = v
			events = append(events, v)
		}
		if v, ok := strings.CutPrefix(line, "data: "); ok {
			var d map[string]any
			_ = json.Unmarshal([]byte(v), &d)
			switch event {
			case "plan":
				if r, _ := d["repairs"].([]any); len(r) != 1 || !strings.Contains(r[0].(string), "draft → trim") {
					t.Errorf("plan repairs = %v, want the added edge draft → trim", d["repairs"])
				}
			case "run":
				runID, _ = d["run_id"].(string)
			case "answer":
				answer, _ = d["output"].(string)
			case "error":
				t.Fatalf("planner error: %s", v)
			}
		}
	}
	want := "SMALL BINARIES WIN (AgentCraft)"
	if answer != want {
		t.Fatalf("answer = %q, want %q; events %v", answer, want, events)
	}
	if strings.Join(events, ",") != "plan,run,step,step,step,step,step,answer" {
		t.Errorf("events = %v, want plan, run, five steps, answer", events)
	}
	if planned.Load() != 1 || drafted.Load() != 1 {
		t.Fatalf("planner calls %d, executor calls %d; want 1 and 1", planned.Load(), drafted.Load())
	}

	var wf store.Workflow
	api(t, addr, "POST", "/api/runs/"+runID+"/crystallize", `{"name":"motto"}`, http.StatusCreated, &wf)
	if wf.Version != 1 {
		t.Errorf("crystallized workflow version %d, want 1", wf.Version)
	}
	file := filepath.Join(dir, "motto.json")
	if err := os.WriteFile(file, wf.Definition, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(agentcraftBinary(t), "lint", file).CombinedOutput(); err != nil {
		t.Fatalf("agentcraft lint: %v\n%s", err, out)
	}
	var run store.Run
	api(t, addr, "POST", "/api/workflows/"+wf.ID+"/runs", `{"input":"a motto for small software"}`, http.StatusAccepted, &run)
	eventually(t, 15*time.Second, "the crystallized workflow's run", func() bool {
		api(t, addr, "GET", "/api/runs/"+run.ID, "", http.StatusOK, &run)
		return run.Status.Final()
	})
	var out string
	_ = json.Unmarshal(run.Output, &out)
	if run.Status != store.RunSucceeded || out != want {
		t.Fatalf("re-run: %s %q output %q, want %q", run.Status, run.Error, out, want)
	}
	if planned.Load() != 1 || drafted.Load() != 2 {
		t.Errorf("after the re-run: planner calls %d (want still 1), executor calls %d (want 2)", planned.Load(), drafted.Load())
	}
}
