package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
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

// TestTriggersCommand creates, lists and deletes triggers from the CLI,
// with errors naming the flag.
func TestTriggersCommand(t *testing.T) {
	t.Chdir(t.TempDir())
	if code, _, errOut := run(t, "keys", "create", "--workspace", "default"); code != 0 {
		t.Fatalf("keys create: %s", errOut)
	}
	code, out, errOut := run(t, "triggers", "create", "--name", "hook", "--webhook", "--agent", "ghost")
	if code == 0 || !strings.Contains(errOut, "--agent") {
		t.Errorf("create with an unknown agent = %d %s %s; want an error naming --agent", code, out, errOut)
	}
	code, _, errOut = run(t, "triggers", "create", "--name", "bad", "--schedule", "0 9 * * *", "--timezone", "Asia/Nowhere", "--workflow", "x")
	if code == 0 || !strings.Contains(errOut, "--") {
		t.Errorf("create with a bad zone = %d %s", code, errOut)
	}
	code, _, errOut = run(t, "triggers", "create", "--name", "bad", "--schedule", "0 9 * * *", "--workflow", "missing")
	if code == 0 || !strings.Contains(errOut, "--workflow") {
		t.Errorf("create with an unknown workflow = %d %s; want an error naming --workflow", code, errOut)
	}
	cfg := "detect_providers: false\nproviders: [{name: up, type: openai, base_url: \"http://127.0.0.1:9/v1\", api_key: k}]\nagents: [{name: helper, model: up/m}]\n"
	if err := os.WriteFile("agentcraft.yaml", []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = run(t, "triggers", "create", "--name", "hook", "--webhook", "--agent", "helper")
	var created struct {
		Trigger struct{ ID, Agent string }
		URL     string
		Secret  string
	}
	if err := json.Unmarshal([]byte(out), &created); code != 0 || err != nil || created.Secret == "" || created.Trigger.Agent != "helper" {
		t.Fatalf("create webhook = %d %s %s", code, out, errOut)
	}
	code, out, errOut = run(t, "triggers", "create", "--name", "hook", "--schedule", "@daily", "--agent", "helper")
	if code == 0 || !strings.Contains(errOut, "--name") {
		t.Errorf("create with a taken name = %d %s", code, errOut)
	}
	if code, out, errOut = run(t, "triggers", "create", "--name", "nightly", "--schedule", "@daily", "--agent", "helper"); code != 0 {
		t.Fatalf("create schedule = %d %s %s", code, out, errOut)
	}
	// The schedule's next fire is the coming UTC midnight (of the moment
	// before or after the listing, should one pass between them).
	midnight := func() string {
		return time.Now().UTC().Truncate(24 * time.Hour).Add(24 * time.Hour).Format(time.RFC3339)
	}
	before := midnight()
	code, out, errOut = run(t, "triggers", "list")
	if code != 0 || !strings.Contains(out, created.Trigger.ID) || !strings.Contains(out, "agent:helper") {
		t.Fatalf("list = %d %s %s", code, out, errOut)
	}
	if after := midnight(); !strings.Contains(out, "NEXT FIRE") || !strings.Contains(out, before) && !strings.Contains(out, after) {
		t.Errorf("list = %s; want a NEXT FIRE column with %s for the @daily schedule", out, after)
	}
	if code, _, errOut = run(t, "triggers", "delete", created.Trigger.ID); code != 0 {
		t.Fatalf("delete = %d %s", code, errOut)
	}
	if code, _, errOut = run(t, "triggers", "delete", created.Trigger.ID); code == 0 || !strings.Contains(errOut, "no trigger") {
		t.Errorf("delete again = %d %s", code, errOut)
	}
}
