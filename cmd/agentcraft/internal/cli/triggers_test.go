package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/internal/egress"
)

// TestTriggersInServe: serve runs the scheduler (a per-second schedule
// starts runs that succeed) and serves signed webhooks at /hooks/{id}.
func TestTriggersInServe(t *testing.T) {
	t.Chdir(t.TempDir())
	code, key, errOut := run(t, "keys", "create", "--workspace", "default")
	if code != 0 {
		t.Fatalf("keys create: %s", errOut)
	}
	key = strings.TrimSpace(key)
	base, _, stop := startServe(t)
	defer stop()
	call := func(method, path, body string, h http.Header) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		for k, v := range h {
			req.Header[k] = v
		}
		if h == nil {
			req.Header.Set("Authorization", "Bearer "+key)
		}
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
	if code, m := call("POST", "/api/workflows", `{"name":"echo","nodes":[{"id":"start","type":"start"},{"id":"end","type":"end"}],
		"edges":[{"id":"e1","source":"start","target":"end"}]}`, nil); code != http.StatusCreated {
		t.Fatalf("create workflow = %d %v", code, m)
	}
	code, sched := call("POST", "/api/triggers", `{"name":"tick","kind":"schedule","workflow":"echo","schedule":"* * * * * *","input":"tick"}`, nil)
	if code != http.StatusCreated {
		t.Fatalf("create schedule = %d %v", code, sched)
	}
	code, hook := call("POST", "/api/triggers", `{"name":"hook","kind":"webhook","workflow":"echo"}`, nil)
	if code != http.StatusCreated {
		t.Fatalf("create webhook = %d %v", code, hook)
	}
	body := `{"event":"push"}`
	ts, sig := egress.SignSplit([]byte(hook["secret"].(string)), time.Now(), []byte(body))
	h := http.Header{}
	h.Set("X-AgentCraft-Timestamp", ts)
	h.Set("X-AgentCraft-Signature", sig)
	h.Set("X-AgentCraft-Delivery", "push-1")
	if code, m := call("POST", hook["url"].(string), body, h); code != http.StatusAccepted {
		t.Fatalf("webhook = %d %v", code, m)
	}

	for _, id := range []string{sched["id"].(string), hook["id"].(string)} {
		deadline := time.Now().Add(20 * time.Second)
		for {
			_, list := call("GET", "/api/runs?status=succeeded&trigger_id="+id, "", nil)
			if runs, _ := list["data"].([]any); len(runs) > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no succeeded run of trigger %s", id)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}
