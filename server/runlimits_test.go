package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/controlplane"
	"github.com/agentcraftlab/agentcraft/server"
	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/workflowtest"
)

// newLimitsEnv is a workflow server with the run service's options.
func newLimitsEnv(t *testing.T, opts controlplane.Options) workflowEnv {
	t.Helper()
	env := servertest.New(t, nil)
	svc := controlplane.New(env.Store, workflowtest.Engine(t, workflow.Services{}), opts)
	srv, err := server.New(env.Platform, &server.Options{Runs: svc})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		svc.Wait()
		srv.Stop()
	})
	return workflowEnv{Env: env, c: client{t: t, base: hs.URL, key: env.Key}}
}

// chainDef is a workflow of n template nodes that each output the input.
func chainDef(n int, settings string) string {
	nodes := []string{`{"id":"start","type":"start"}`}
	var edges []string
	prev := "start"
	for i := range n {
		id := fmt.Sprintf("c%d", i)
		nodes = append(nodes, fmt.Sprintf(`{"id":%q,"type":"code","config":{"mode":"template","template":"{{input}}"}}`, id))
		edges = append(edges, fmt.Sprintf(`{"id":"e%d","source":%q,"target":%q}`, i, prev, id))
		prev = id
	}
	nodes = append(nodes, `{"id":"end","type":"end"}`)
	edges = append(edges, fmt.Sprintf(`{"id":"last","source":%q,"target":"end"}`, prev))
	return fmt.Sprintf(`{"name":"chain","nodes":[%s],"edges":[%s],"settings":%s}`, strings.Join(nodes, ","), strings.Join(edges, ","), settings)
}

// TestRunCeilingsAPI: a definition above the server's ceilings is refused
// at save with a 422 naming the setting, and a stored one (saved before
// the ceiling was lowered) cannot start.
func TestRunCeilingsAPI(t *testing.T) {
	e := newLimitsEnv(t, controlplane.Options{MaxStepsCeiling: 50})
	resp, body := e.c.do("POST", "/api/workflows", chainDef(1, `{"max_steps": 100000000}`))
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(body), `"path":"settings.max_steps"`) {
		t.Errorf("save with max_steps 100000000 = %d %s; want 422 naming settings.max_steps", resp.StatusCode, body)
	}
	resp, body = e.c.do("POST", "/api/workflows", chainDef(1, `{"timeout": "25h"}`))
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(body), `"path":"settings.timeout"`) {
		t.Errorf("save with timeout 25h = %d %s; want 422 naming settings.timeout (default ceiling 24h)", resp.StatusCode, body)
	}
	// A workflow stored before the ceiling existed.
	wf, err := e.Store.Workflows().Create(t.Context(), store.Workflow{WorkspaceID: e.Workspace.ID, Name: "old", Definition: json.RawMessage(chainDef(1, `{"max_steps": 1000}`))})
	if err != nil {
		t.Fatal(err)
	}
	resp, body = e.c.do("POST", "/api/workflows/"+wf.ID+"/runs", `{"input": "x"}`)
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(body), "settings.max_steps") {
		t.Errorf("start above the ceiling = %d %s; want 422 naming settings.max_steps", resp.StatusCode, body)
	}
}

// TestStorageQuotaAPI: starting a run in a workspace over its storage
// quota answers 422 storage_quota_exceeded.
func TestStorageQuotaAPI(t *testing.T) {
	e := newLimitsEnv(t, controlplane.Options{StorageQuota: 20_000})
	wf := e.create(chainDef(8, `{}`))
	big := strings.Repeat("x", 4000)
	run := e.start(wf.ID, `{"input": "`+big+`"}`)
	got := e.wait(run.ID, store.RunFailed, store.RunSucceeded)
	if got.Status != store.RunFailed || !strings.Contains(got.Error, "storage quota exceeded") {
		t.Fatalf("run = %s %q; want failed on the storage quota", got.Status, got.Error)
	}
	for range 10 {
		resp, body := e.c.do("POST", "/api/workflows/"+wf.ID+"/runs", `{"input": "`+big+`"}`)
		if resp.StatusCode == http.StatusAccepted {
			var r store.Run
			_ = json.Unmarshal(body, &r)
			e.wait(r.ID, store.RunFailed, store.RunSucceeded)
			continue
		}
		if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(body), `"storage_quota_exceeded"`) {
			t.Fatalf("start over the quota = %d %s; want 422 storage_quota_exceeded", resp.StatusCode, body)
		}
		return
	}
	t.Fatal("runs kept starting past the storage quota")
}

// TestRunDetailPaginated: GET /api/runs/{id} answered every checkpoint
// (15 MB for a runaway run); it now answers the first page with a cursor,
// and GET /api/runs/{id}/checkpoints pages through the rest.
func TestRunDetailPaginated(t *testing.T) {
	e := newLimitsEnv(t, controlplane.Options{})
	wf := e.create(chainDef(7, `{}`))
	run := e.start(wf.ID, `{"input": "hi"}`)
	e.wait(run.ID, store.RunSucceeded)

	type page struct {
		store.Run
		Checkpoints []struct {
			Key string `json:"key"`
		} `json:"checkpoints"`
		Data []struct {
			Key string `json:"key"`
		} `json:"data"`
		Next string `json:"next"`
	}
	var all page
	e.c.json("GET", "/api/runs/"+run.ID, "", http.StatusOK, &all)
	// c0..c6: 7 checkpoints, all in the default page.
	if len(all.Checkpoints) != 7 || all.Next != "" || all.Status != store.RunSucceeded {
		t.Fatalf("GET run = %d checkpoints, next %q, status %s; want 7, none, succeeded", len(all.Checkpoints), all.Next, all.Status)
	}
	var first page
	e.c.json("GET", "/api/runs/"+run.ID+"?limit=3", "", http.StatusOK, &first)
	if len(first.Checkpoints) != 3 || first.Next == "" || first.ID != run.ID {
		t.Fatalf("GET run?limit=3 = %d checkpoints, next %q; want 3 and a cursor", len(first.Checkpoints), first.Next)
	}
	pages := 1
	keys := []string{}
	for _, cp := range first.Checkpoints {
		keys = append(keys, cp.Key)
	}
	for cursor := first.Next; cursor != ""; {
		var p page
		e.c.json("GET", "/api/runs/"+run.ID+"/checkpoints?limit=3&cursor="+cursor, "", http.StatusOK, &p)
		if pages++; pages > 5 {
			t.Fatal("the pages never end")
		}
		for _, cp := range p.Data {
			keys = append(keys, cp.Key)
		}
		cursor = p.Next
	}
	var want []string
	for _, cp := range all.Checkpoints {
		want = append(want, cp.Key)
	}
	if strings.Join(keys, ",") != strings.Join(want, ",") || pages != 3 {
		t.Errorf("paged keys = %v in %d pages, want %v in 3", keys, pages, want)
	}
	for _, q := range []string{"?limit=0", "?limit=1001", "/checkpoints?cursor=abc"} {
		if resp, body := e.c.do("GET", "/api/runs/"+run.ID+q, ""); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("GET run%s = %d %s, want 400", q, resp.StatusCode, body)
		}
	}
	if resp, _ := e.c.do("GET", "/api/runs/nope/checkpoints", ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("checkpoints of an unknown run = %d, want 404", resp.StatusCode)
	}
}
