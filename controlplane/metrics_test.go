package controlplane_test

import (
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/controlplane"
	"github.com/agentcraftlab/agentcraft/internal/metrics"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/workflowtest"
)

// scrape returns m's exposition as series → value text.
func scrape(t *testing.T, m *metrics.Metrics) map[string]string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	out := map[string]string{}
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if series, value, ok := strings.Cut(line, " "); ok && !strings.HasPrefix(line, "#") {
			out[series] = value
		}
	}
	return out
}

// TestRunMetrics: a run that parks at a human node and is resumed counts
// two executions (waiting, then succeeded) and each node once by kind and
// status — the agent node replayed on resume (and the human node, whose
// answer is its saved output) is not counted again.
func TestRunMetrics(t *testing.T) {
	st := openStore(t, filepath.Join(t.TempDir(), "db"))
	ws := workspace(t, st)
	res := workflowtest.NewResolver(t, llmtest.Turn{Text: "A memo."})
	eng := workflowtest.Engine(t, workflow.Services{Agents: res})
	m := metrics.New(&metrics.Options{NoRuntime: true})
	svc := controlplane.New(st, eng, controlplane.Options{Owner: "p", SingleProcess: true, Metrics: m})
	run, err := svc.Start(t.Context(), controlplane.StartRequest{WorkspaceID: ws, Definition: json.RawMessage(humanFlow), Input: controlplane.RunInput{Input: "budget"}})
	if err != nil {
		t.Fatal(err)
	}
	svc.Wait()
	waitStatus(t, st, ws, run.ID, store.RunWaiting)
	if _, err := svc.Resume(t.Context(), ws, run.ID, "approved"); err != nil {
		t.Fatal(err)
	}
	svc.Wait()
	waitStatus(t, st, ws, run.ID, store.RunSucceeded)

	got := scrape(t, m)
	for series, want := range map[string]string{
		`agentcraft_workflow_runs_total{status="waiting"}`:                                 "1",
		`agentcraft_workflow_runs_total{status="succeeded"}`:                               "1",
		`agentcraft_workflow_run_duration_seconds_count{status="succeeded"}`:               "1",
		`agentcraft_workflow_nodes_total{kind="agent",status="succeeded"}`:                 "1",
		`agentcraft_workflow_nodes_total{kind="human",status="waiting"}`:                   "1",
		`agentcraft_workflow_nodes_total{kind="code",status="succeeded"}`:                  "1",
		`agentcraft_workflow_node_duration_seconds_count{kind="agent",status="succeeded"}`: "1",
	} {
		if got[series] != want {
			t.Errorf("%s = %q, want %s", series, got[series], want)
		}
	}
	for series := range got {
		if strings.Contains(series, run.ID) || strings.Contains(series, ws) {
			t.Errorf("series %s holds an id", series)
		}
	}
}
