package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/store"
)

func TestRetentionAPI(t *testing.T) {
	env := servertest.New(t, &servertest.Options{Retention: map[string]string{"run_events": "30d", "audit": "400d"}})
	call := func(method, body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, env.URL+"/api/retention", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+env.Key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s /api/retention: %d %s", method, resp.StatusCode, b)
		}
		return resp.StatusCode, m
	}
	code, got := call("GET", "")
	eff, _ := got["effective"].(map[string]any)
	if code != http.StatusOK || eff["run_events"] != "30d" || eff["audit"] != "400d" || eff["conversations"] != "keep" {
		t.Fatalf("GET = %d %v", code, got)
	}
	code, got = call("PUT", `{"run_events": "7d", "conversations": "keep"}`)
	eff, _ = got["effective"].(map[string]any)
	own, _ := got["workspace"].(map[string]any)
	if code != http.StatusOK || eff["run_events"] != "7d" || own["conversations"] != "keep" || eff["audit"] != "400d" {
		t.Fatalf("PUT = %d %v", code, got)
	}
	code, got = call("PUT", `{"run_events": ""}`)
	if eff, _ = got["effective"].(map[string]any); code != http.StatusOK || eff["run_events"] != "30d" {
		t.Errorf("PUT back to the server's = %d %v", code, got)
	}
	for body, param := range map[string]string{
		`{"audit": "1d"}`:         "audit",
		`{"queue_jobs": "1d"}`:    "queue_jobs",
		`{"run_event": "1d"}`:     "run_event",
		`{"uploads": "tomorrow"}`: "uploads",
	} {
		code, got := call("PUT", body)
		e, _ := got["error"].(map[string]any)
		if code != http.StatusBadRequest || e["param"] != param {
			t.Errorf("PUT %s = %d %v, want 400 naming %s", body, code, got, param)
		}
	}
	// Audit events are written in batches, a moment after the answer:
	// the two successful PUTs' events are waited for (the four refusals
	// record none).
	var n int
	var err error
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var page store.AuditPage
		page, err = env.Store.AuditLog().List(t.Context(), store.AuditFilter{WorkspaceID: env.Workspace.ID, Action: "retention.update"})
		n = len(page.Events)
		if (err == nil && n >= 2) || time.Now().After(deadline) {
			break
		}
	}
	if err != nil || n != 2 {
		t.Errorf("retention.update audit events = %d, %v; want 2", n, err)
	}
}
