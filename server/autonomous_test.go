package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/store"
)

// An autonomous node's medium tool call is an approval of the task
// service, like every other (P0): it shows in /api/approvals, the run
// parks on it, and approving it through the task resumes the run, which
// runs the call once and finishes.
func TestAutonomousApprovalThroughTasks(t *testing.T) {
	fake := llmtest.NewOpenAI(t,
		llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "j1", Name: "run_javascript", Arguments: `{"code":"6*7"}`}}},
		llmtest.Turn{Text: "It is 42."},
	)
	env := servertest.New(t, &servertest.Options{Providers: []platform.ProviderConfig{fakeProvider(fake)}, Workflows: true, Tasks: true})
	c := client{t: t, base: env.URL, key: env.Key}
	var wf store.Workflow
	c.json("POST", "/api/workflows", `{"name":"auto","nodes":[{"id":"start","type":"start"},
{"id":"agent","type":"autonomous","config":{"model":"fake/fake-model","tools":["run_javascript"],"goal":"{{input}}"}},
{"id":"end","type":"end"}],
"edges":[{"id":"e1","source":"start","target":"agent"},{"id":"e2","source":"agent","target":"end"}]}`, http.StatusCreated, &wf)
	var run store.Run
	c.json("POST", "/api/workflows/"+wf.ID+"/runs", `{"input":"What is six times seven?"}`, http.StatusAccepted, &run)
	get := func() store.Run {
		var r store.Run
		c.json("GET", "/api/runs/"+run.ID, "", http.StatusOK, &r)
		return r
	}
	deadline := time.Now().Add(10 * time.Second)
	for get().Status != store.RunWaiting {
		if time.Now().After(deadline) {
			t.Fatalf("run is %s, want waiting on the approval", get().Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var inbox struct{ Data []store.Approval }
	c.json("GET", "/api/approvals?status=pending", "", http.StatusOK, &inbox)
	if len(inbox.Data) != 1 || inbox.Data[0].RunID != run.ID || inbox.Data[0].Capability != store.Capability("medium") ||
		!strings.Contains(inbox.Data[0].Summary, "run_javascript") {
		t.Fatalf("approvals inbox = %+v", inbox.Data)
	}
	if n := len(fake.Requests()); n != 1 {
		t.Fatalf("%d model requests before the decision, want 1", n)
	}
	// An answer through the run API is not an approval: the run parks on
	// the same pending approval again and the tool does not run.
	c.json("POST", "/api/runs/"+run.ID+"/resume", `{"input":{"approve":true}}`, http.StatusAccepted, nil)
	for get().Status != store.RunWaiting {
		if time.Now().After(deadline) {
			t.Fatalf("after a resume the run is %s, want waiting on the approval again", get().Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.json("GET", "/api/approvals?status=pending", "", http.StatusOK, &inbox)
	if len(inbox.Data) != 1 || len(fake.Requests()) != 1 {
		t.Fatalf("after a resume: %d pending approvals, %d model requests; want the same one approval and no new request", len(inbox.Data), len(fake.Requests()))
	}
	c.json("POST", "/api/tasks/"+inbox.Data[0].TaskID+"/approve", `{}`, http.StatusOK, nil)
	for !get().Status.Final() {
		if time.Now().After(deadline.Add(10 * time.Second)) {
			t.Fatalf("run is %s after the approval", get().Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
	final := get()
	var out string
	_ = json.Unmarshal(final.Output, &out)
	if final.Status != store.RunSucceeded || out != "It is 42." {
		t.Fatalf("run = %s %q output %s", final.Status, final.Error, final.Output)
	}
	reqs := fake.Requests()
	if len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), "42") {
		t.Errorf("model requests = %d; the last should carry the tool's result 42", len(reqs))
	}
}
