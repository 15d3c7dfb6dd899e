package server_test

import (
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/controlplane"
	"github.com/agentcraftlab/agentcraft/secret"
	"github.com/agentcraftlab/agentcraft/server"
	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/trigger"
	"github.com/agentcraftlab/agentcraft/trigger/triggertest"
	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/workflowtest"
)

// newTriggerEnv is a server with runs and triggers; its client holds the
// owner's key.
func newTriggerEnv(t *testing.T) (*servertest.Env, client, string) {
	t.Helper()
	env := servertest.New(t, nil)
	runs := controlplane.New(env.Store, workflowtest.Engine(t, workflow.Services{}), controlplane.Options{Audit: env.Platform.RecordAudit})
	key := make([]byte, secret.KeySize)
	rand.Read(key)
	box, err := secret.New(key)
	if err != nil {
		t.Fatal(err)
	}
	tsvc, err := trigger.New(env.Store, runs, box, &trigger.Options{Agents: env.Platform, Audit: env.Platform.RecordAudit})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(env.Platform, &server.Options{Runs: runs, Triggers: tsvc, MaxWebhookBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		runs.Wait()
		srv.Stop()
	})
	return env, client{t: t, base: hs.URL, key: env.Key}, hs.URL
}

// hook posts body to a webhook URL with the given headers.
func hook(t *testing.T, url string, body string, h http.Header) (*http.Response, []byte) {
	t.Helper()
	return servertest.Client{T: t}.DoWith(http.MethodPost, url, body, h)
}

type triggerBody struct {
	store.Trigger
	URL      string     `json:"url"`
	NextFire *time.Time `json:"next_fire"`
	Secret   string     `json:"secret"`
}

// TestWebhookTrigger: a webhook refuses a bad signature (401) and a stale
// timestamp (401), accepts a good one (202) whose run shows in the run
// list with its trigger, and answers a redelivery with the first run
// (200), starting no second one.
func TestWebhookTrigger(t *testing.T) {
	env, c, base := newTriggerEnv(t)
	var wf store.Workflow
	c.json("POST", "/api/workflows", `{"name":"noop","nodes":[{"id":"start","type":"start"},{"id":"end","type":"end"}],
		"edges":[{"id":"e1","source":"start","target":"end"}]}`, http.StatusCreated, &wf)
	var tg triggerBody
	c.json("POST", "/api/triggers", `{"name":"github","kind":"webhook","workflow":"noop"}`, http.StatusCreated, &tg)
	if tg.Secret == "" || tg.URL != "/hooks/"+tg.ID || tg.WorkflowID != wf.ID || !tg.Enabled {
		t.Fatalf("created %+v", tg)
	}
	// The secret is shown once.
	resp, b := c.do("GET", "/api/triggers/"+tg.ID, "")
	if resp.StatusCode != http.StatusOK || strings.Contains(string(b), tg.Secret) || strings.Contains(string(b), "secret") {
		t.Errorf("GET trigger = %d %s; the secret must not be shown again", resp.StatusCode, b)
	}

	url := base + tg.URL
	body := `{"ref":"refs/heads/main","commits":3}`
	now := time.Now()
	resp, b = hook(t, url, body, triggertest.Headers("whsec_wrong", now, body, "d1"))
	wantError(t, resp, b, http.StatusUnauthorized, "invalid_signature")
	resp, b = hook(t, url, body, http.Header{})
	wantError(t, resp, b, http.StatusUnauthorized, "invalid_signature")
	resp, b = hook(t, url, body, triggertest.Headers(tg.Secret, now.Add(-10*time.Minute), body, "d1"))
	wantError(t, resp, b, http.StatusUnauthorized, "stale_timestamp")
	resp, b = hook(t, base+"/hooks/no-such-trigger", body, triggertest.Headers(tg.Secret, now, body, "d1"))
	wantError(t, resp, b, http.StatusNotFound, "not_found")
	big := `{"pad":"` + strings.Repeat("x", 5000) + `"}`
	resp, b = hook(t, url, big, triggertest.Headers(tg.Secret, now, big, "d1"))
	wantError(t, resp, b, http.StatusRequestEntityTooLarge, "request_too_large")

	resp, b = hook(t, url, body, triggertest.Headers(tg.Secret, now, body, "d1"))
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("good delivery = %d %s", resp.StatusCode, b)
	}
	var got struct {
		RunID     string `json:"run_id"`
		Replay    bool   `json:"replay"`
		TriggerID string `json:"trigger_id"`
	}
	if err := json.Unmarshal(b, &got); err != nil || got.RunID == "" || got.Replay || got.TriggerID != tg.ID {
		t.Fatalf("good delivery answered %s", b)
	}
	// A redelivery (same id, signed again) answers the first run.
	resp, b = hook(t, url, body, triggertest.Headers(tg.Secret, now.Add(2*time.Second), body, "d1"))
	var again struct {
		RunID  string `json:"run_id"`
		Replay bool   `json:"replay"`
	}
	if err := json.Unmarshal(b, &again); resp.StatusCode != http.StatusOK || err != nil || again.RunID != got.RunID || !again.Replay {
		t.Errorf("redelivery = %d %s; want 200 with run %s", resp.StatusCode, b, got.RunID)
	}

	var list struct {
		Data []store.Run `json:"data"`
	}
	c.json("GET", "/api/runs?trigger_id="+tg.ID, "", http.StatusOK, &list)
	if len(list.Data) != 1 || list.Data[0].ID != got.RunID || list.Data[0].TriggerID != tg.ID {
		t.Fatalf("runs of the trigger = %+v; want the one run", list.Data)
	}
	var in struct {
		Input map[string]any `json:"input"`
	}
	if err := json.Unmarshal(list.Data[0].Input, &in); err != nil || in.Input["ref"] != "refs/heads/main" {
		t.Errorf("run input %s; want the webhook body", list.Data[0].Input)
	}
	c.json("GET", "/api/runs", "", http.StatusOK, &list)
	if len(list.Data) != 1 || list.Data[0].TriggerID != tg.ID {
		t.Errorf("GET /api/runs = %+v; want the run with its trigger_id", list.Data)
	}

	// Rotation shows a new secret once; the old one stops working.
	var rotated triggerBody
	c.json("POST", "/api/triggers/"+tg.ID+"/secret", "", http.StatusOK, &rotated)
	if rotated.Secret == "" || rotated.Secret == tg.Secret {
		t.Fatalf("rotated secret %q", rotated.Secret)
	}
	resp, b = hook(t, url, body, triggertest.Headers(tg.Secret, now, body, "d2"))
	wantError(t, resp, b, http.StatusUnauthorized, "invalid_signature")

	// A disabled webhook answers as an unknown one.
	c.json("PATCH", "/api/triggers/"+tg.ID, `{"enabled":false}`, http.StatusOK, nil)
	resp, b = hook(t, url, body, triggertest.Headers(rotated.Secret, now, body, "d3"))
	wantError(t, resp, b, http.StatusNotFound, "not_found")

	c.json("DELETE", "/api/triggers/"+tg.ID, "", http.StatusNoContent, nil)
	resp, b = c.do("GET", "/api/triggers/"+tg.ID, "")
	wantError(t, resp, b, http.StatusNotFound, "not_found")

	env.Platform.Stop() // the audit log is written in the background: flush it
	page, err := env.Store.AuditLog().List(t.Context(), store.AuditFilter{WorkspaceID: env.Workspace.ID, Limit: store.MaxAuditLimit})
	if err != nil {
		t.Fatal(err)
	}
	actions := map[string]bool{}
	for _, e := range page.Events {
		if e.Target == "trigger:"+tg.ID {
			actions[e.Action] = true
			if strings.Contains(string(e.Details), tg.Secret) {
				t.Errorf("audit %s holds the secret", e.Action)
			}
		}
	}
	for _, a := range []string{"trigger.create", "trigger.update", "trigger.rotate_secret", "trigger.delete"} {
		if !actions[a] {
			t.Errorf("no %s audit event (have %v)", a, actions)
		}
	}
}

func tokyo(t *testing.T) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// TestTriggerBadInput: invalid cron spec, unknown time zone, unknown
// workflow and the like answer 400 naming the field; a good schedule says
// when it fires next (none while disabled).
func TestTriggerBadInput(t *testing.T) {
	_, c, _ := newTriggerEnv(t)
	c.json("POST", "/api/workflows", `{"name":"noop","nodes":[{"id":"start","type":"start"},{"id":"end","type":"end"}],
		"edges":[{"id":"e1","source":"start","target":"end"}]}`, http.StatusCreated, nil)
	for _, tc := range []struct{ body, param string }{
		{`{"name":"a","kind":"schedule","workflow":"noop","schedule":"every day at nine"}`, "schedule"},
		{`{"name":"a","kind":"schedule","workflow":"noop","schedule":"0 9 * * *","timezone":"Asia/Atlantis"}`, "timezone"},
		{`{"name":"a","kind":"schedule","workflow":"missing","schedule":"0 9 * * *"}`, "workflow"},
		{`{"name":"a","kind":"schedule","agent":"ghost","schedule":"0 9 * * *"}`, "agent"},
		{`{"name":"a","kind":"schedule","workflow":"noop","schedule":"0 9 * * *","misfire":"twice"}`, "misfire"},
		{`{"name":"a","kind":"hourly","workflow":"noop"}`, "kind"},
		{`{"name":"a","kind":"schedule","workflow":"noop","schedule":"0 9 * * *","colour":"red"}`, "colour"},
	} {
		resp, b := c.do("POST", "/api/triggers", tc.body)
		d := wantError(t, resp, b, http.StatusBadRequest, "invalid_request")
		if d.Param != tc.param {
			t.Errorf("POST %s: param %v, want %q (%s)", tc.body, d.Param, tc.param, d.Message)
		}
	}
	var tg triggerBody
	c.json("POST", "/api/triggers", `{"name":"tokyo","kind":"schedule","workflow":"noop","schedule":"0 9 * * 1-5","timezone":"Asia/Tokyo","misfire":"catch_up_once"}`,
		http.StatusCreated, &tg)
	if tg.Secret != "" || tg.URL != "" || tg.Misfire != store.MisfireCatchUpOnce {
		t.Errorf("schedule trigger %+v", tg)
	}
	// next_fire is the next weekday 09:00 in Tokyo, 00:00 UTC, within a
	// week; a disabled schedule has none.
	if n := tg.NextFire; n == nil || !n.After(time.Now()) || n.After(time.Now().Add(4*24*time.Hour)) ||
		n.UTC().Hour() != 0 || n.UTC().Minute() != 0 || n.In(tokyo(t)).Weekday() == time.Saturday || n.In(tokyo(t)).Weekday() == time.Sunday {
		t.Errorf("next_fire of a weekday 09:00 Tokyo schedule = %v", tg.NextFire)
	}
	// An input set, then cleared with null (the studio's emptied field).
	var in triggerBody
	c.json("PATCH", "/api/triggers/"+tg.ID, `{"input":{"team":"sales"}}`, http.StatusOK, &in)
	if string(in.Input) != `{"team":"sales"}` {
		t.Errorf("input after PATCH = %s", in.Input)
	}
	var cleared triggerBody
	c.json("PATCH", "/api/triggers/"+tg.ID, `{"input":null}`, http.StatusOK, &cleared)
	if cleared.Input != nil {
		t.Errorf("input after PATCH {\"input\":null} = %s; want none", cleared.Input)
	}
	var off triggerBody
	c.json("PATCH", "/api/triggers/"+tg.ID, `{"enabled":false}`, http.StatusOK, &off)
	if off.NextFire != nil {
		t.Errorf("a disabled schedule has next_fire %v; want none", off.NextFire)
	}
	c.json("PATCH", "/api/triggers/"+tg.ID, `{"enabled":true}`, http.StatusOK, nil)
	resp, b := c.do("PATCH", "/api/triggers/"+tg.ID, `{"schedule":"99 * * * *"}`)
	if d := wantError(t, resp, b, http.StatusBadRequest, "invalid_request"); d.Param != "schedule" {
		t.Errorf("PATCH bad schedule param %v", d.Param)
	}
	resp, b = c.do("PATCH", "/api/triggers/"+tg.ID, `{"kind":"webhook"}`)
	if d := wantError(t, resp, b, http.StatusBadRequest, "invalid_request"); d.Param != "kind" {
		t.Errorf("PATCH kind param %v", d.Param)
	}
	resp, b = c.do("POST", "/api/triggers", `{"name":"tokyo","kind":"schedule","workflow":"noop","schedule":"@daily"}`)
	wantError(t, resp, b, http.StatusConflict, "conflict")
}
