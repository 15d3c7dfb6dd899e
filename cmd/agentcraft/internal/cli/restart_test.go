package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestHumanRunSurvivesRestart: a run parked on a human node survives a
// server restart and is resumed through the API; a second resume changes
// nothing.
func TestHumanRunSurvivesRestart(t *testing.T) {
	t.Chdir(t.TempDir())
	code, key, errOut := run(t, "keys", "create", "--workspace", "default")
	if code != 0 {
		t.Fatalf("keys create: %s", errOut)
	}
	key = strings.TrimSpace(key)

	start := func() (string, func()) {
		base, _, stop := startServe(t)
		return base, stop
	}
	call := func(base, method, path, body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		return resp.StatusCode, m
	}
	waitFor := func(base, id, status string) map[string]any {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			_, run := call(base, "GET", "/api/runs/"+id, "")
			if run["status"] == status {
				return run
			}
			if time.Now().After(deadline) {
				t.Fatalf("run %s is %v (error %v), want %s", id, run["status"], run["error"], status)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	base, stop := start()
	def := `{"name":"approval","nodes":[{"id":"start","type":"start"},
	{"id":"draft","type":"code","config":{"mode":"template","template":"draft of {{input}}"}},
	{"id":"ok","type":"human","config":{"prompt":"Approve {{input}}?"}},
	{"id":"final","type":"code","config":{"mode":"template","template":"{{nodes.draft.output}}: {{input}}"}},
	{"id":"end","type":"end"}],
	"edges":[{"id":"e1","source":"start","target":"draft"},{"id":"e2","source":"draft","target":"ok"},{"id":"e3","source":"ok","target":"final"},{"id":"e4","source":"final","target":"end"}]}`
	code, wf := call(base, "POST", "/api/workflows", def)
	if code != http.StatusCreated {
		t.Fatalf("create workflow: %d %v", code, wf)
	}
	code, r := call(base, "POST", "/api/workflows/"+wf["id"].(string)+"/runs", `{"input":"the memo"}`)
	if code != http.StatusAccepted {
		t.Fatalf("start run: %d %v", code, r)
	}
	id := r["id"].(string)
	waitFor(base, id, "waiting")
	stop()

	base, stop = start()
	defer stop()
	if got := waitFor(base, id, "waiting"); got["waiting_node"] != "ok" {
		t.Fatalf("after restart: %v", got)
	}
	code, r = call(base, "POST", "/api/runs/"+id+"/resume", `{"input":"approved"}`)
	if code != http.StatusAccepted {
		t.Fatalf("resume: %d %v", code, r)
	}
	done := waitFor(base, id, "succeeded")
	if done["output"] != "draft of the memo: approved" {
		t.Errorf("output %v", done["output"])
	}
	code, r = call(base, "POST", "/api/runs/"+id+"/resume", `{"input":"rejected"}`)
	if code != http.StatusOK || r["resumed"] != false {
		t.Errorf("second resume: %d %v", code, r)
	}
	if got := waitFor(base, id, "succeeded"); got["output"] != "draft of the memo: approved" {
		t.Errorf("second resume changed the output: %v", got["output"])
	}
}
