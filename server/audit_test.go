package server_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/agentcraftlab/agentcraft/guard"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/llm/middleware"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/store"
)

// personalData is a conversation's worth of personal data of eleven kinds,
// each introduced by words that give the detector its context.
var personalData = []struct{ kind, intro, value string }{
	{"email", "email", "taro.yamada@example.co.jp"},
	{"phone", "call me on", "+81 90-1234-5678"},
	{"card", "my card is", "4111 1111 1111 1111"},
	{"iban", "IBAN", "GB82 WEST 1234 5698 7654 32"},
	{"ipv4", "server IP", "203.0.113.45"},
	{"tw id", "身分證", "A123456789"},
	{"jp my number", "マイナンバー", "123456789018"},
	{"kr rrn", "주민등록번호", "900101-1234568"},
	{"us ssn", "SSN", "078-05-1121"},
	{"uk nhs", "NHS number", "943 476 5919"},
	{"tw phone", "手機", "0912-345-678"},
}

// safetyProvider is the fake provider with guard and PII masking on: a
// warn rule that matches card numbers (so its match excerpt is personal
// data), a log rule keyed on an e-mail address, and a block rule.
func safetyProvider(t *testing.T, fake *llmtest.Server) platform.ProviderConfig {
	t.Helper()
	var s middleware.Settings
	if err := yaml.Unmarshal([]byte(`
guard:
  rules:
    - {name: card-digits, pattern: '[0-9]{4} [0-9]{4} [0-9]{4} [0-9]{4}', action: warn}
    - {name: vip-mail, keywords: ["taro.yamada@example.co.jp"], action: log, direction: input}
    - {name: weapons, keywords: ["build a bomb"], action: block, direction: input}
  scan_output: true
pii: {}
retry: {enabled: false}
`), &s); err != nil {
		t.Fatal(err)
	}
	return platform.ProviderConfig{Name: "fake", Type: "openai", BaseURL: fake.URL + "/v1", APIKey: "upstream-secret", Middleware: s}
}

type auditEvents struct {
	Events []store.AuditEvent `json:"events"`
	Next   string             `json:"next"`
}

// listAll pages through GET /api/audit-logs?query and returns the events
// and the raw bodies.
func (c client) listAll(query url.Values) ([]store.AuditEvent, string) {
	c.t.Helper()
	var (
		all    []store.AuditEvent
		bodies strings.Builder
	)
	for range 100 {
		resp, body := c.do("GET", "/api/audit-logs?"+query.Encode(), "")
		if resp.StatusCode != http.StatusOK {
			c.t.Fatalf("GET /api/audit-logs?%s = %d %s", query.Encode(), resp.StatusCode, body)
		}
		bodies.Write(body)
		var page auditEvents
		if err := json.Unmarshal(body, &page); err != nil {
			c.t.Fatalf("decode %s: %v", body, err)
		}
		all = append(all, page.Events...)
		if page.Next == "" {
			return all, bodies.String()
		}
		query.Set("cursor", page.Next)
	}
	c.t.Fatal("audit log paging did not end")
	return nil, ""
}

// TestAuditLogHoldsNoPersonalData is the acceptance test of the audit log:
// a conversation full of personal data goes through the server with guard
// and PII masking on, and neither the server's whole log output (Debug and
// up) nor the audit rows (through the API and straight from the store)
// contain any of the values, in their written or digits-only form, while
// the guard, PII and credential events are all there.
func TestAuditLogHoldsNoPersonalData(t *testing.T) {
	fake := llmtest.NewOpenAI(t)
	helper := platform.AgentSpec{Name: "helper", Model: "fake/fake-model", Instructions: "Help."}
	env := servertest.New(t, &servertest.Options{Providers: []platform.ProviderConfig{safetyProvider(t, fake)}, Agents: []platform.AgentSpec{helper}})
	c := client{t: t, base: env.URL, key: env.Key}

	var user strings.Builder
	user.WriteString("Here are my details.")
	for _, p := range personalData {
		user.WriteString(" " + p.intro + " " + p.value + ".")
	}
	msg, err := json.Marshal(user.String())
	if err != nil {
		t.Fatal(err)
	}
	// The model echoes the tokens it was given; the PII layer puts the
	// values back, so the guard's output scan sees the card number.
	answer := "Noted: I will write to [EMAIL_1] and charge [CREDIT_CARD_1]."
	fake.Push(llmtest.Turn{Text: answer}, llmtest.Turn{Text: answer})
	for _, stream := range []string{"false", "true"} {
		resp, body := c.do("POST", "/v1/chat/completions", `{"model":"helper","stream":`+stream+`,"messages":[{"role":"user","content":`+string(msg)+`}]}`)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("chat (stream %s) = %d %s", stream, resp.StatusCode, body)
		}
		// The client gets its own data back: masking is invisible to it.
		if !strings.Contains(strings.ReplaceAll(string(body), `"`, ""), "taro.yamada@example.co.jp") {
			t.Errorf("chat (stream %s): the answer lacks the restored e-mail address: %s", stream, body)
		}
	}
	resp, body := c.do("POST", "/v1/chat/completions", `{"model":"helper","messages":[{"role":"user","content":"My SSN is 078-05-1121; tell me how to build a bomb."}]}`)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), guard.DefaultBlockMessage) {
		t.Fatalf("blocked chat = %d %s", resp.StatusCode, body)
	}
	for _, r := range fake.Requests() {
		for _, p := range personalData {
			if strings.Contains(string(r.Body), p.value) {
				t.Errorf("the provider received the %s %q", p.kind, p.value)
			}
		}
	}
	const upstreamKey = "sk-live-0123456789abcdef"
	c.json("POST", "/api/credentials", `{"provider":"fake","api_key":"`+upstreamKey+`"}`, http.StatusOK, nil)

	// The recorder writes in the background: wait for the last event.
	var events []store.AuditEvent
	var bodies string
	for deadline := time.Now().Add(10 * time.Second); ; {
		events, bodies = c.listAll(url.Values{})
		if hasAction(events, "credential.put") && hasAction(events, "guard.block") || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}

	// The events are there, with counts and rule names.
	keyID := apiKeyID(t, env)
	count := map[string]int{}
	for _, e := range events {
		count[e.Action]++
		if e.WorkspaceID != env.Workspace.ID {
			t.Errorf("event %s of workspace %s, want %s", e.Action, e.WorkspaceID, env.Workspace.ID)
		}
		if e.Actor != "apikey:"+keyID {
			t.Errorf("event %s actor = %q, want apikey:%s", e.Action, e.Actor, keyID)
		}
		var d map[string]any
		if err := json.Unmarshal(e.Details, &d); len(e.Details) > 0 && err != nil {
			t.Errorf("event %s details %s: %v", e.Action, e.Details, err)
		}
		switch {
		case e.Action == "pii.detected" && d["direction"] == "input":
			if n, _ := d["count"].(float64); n < float64(len(personalData)) {
				t.Errorf("pii.detected input count = %v, want at least %d: %s", d["count"], len(personalData), e.Details)
			}
			ents, _ := d["entities"].(map[string]any)
			for _, rule := range []string{"Global.Email", "Global.CreditCard", "Global.IBAN", "KR.RRN", "US.SSN", "UK.NHSNumber", "TW.NationalID", "JP.MyNumber"} {
				if ents[rule] == nil {
					t.Errorf("pii.detected entities %v lack %s", ents, rule)
				}
			}
		case e.Action == "guard.warn":
			if _, leaked := d["match"]; d["rule"] != "card-digits" || d["match_len"] == nil || leaked {
				t.Errorf("guard.warn details = %s, want rule card-digits, match_len and no match text", e.Details)
			}
		case e.Action == "credential.put":
			if e.Target != "provider:fake" {
				t.Errorf("credential.put target = %q, want provider:fake", e.Target)
			}
		}
	}
	// Two chats each warn on input and on output, log the e-mail keyword
	// and detect PII on input; the third is blocked.
	for action, min := range map[string]int{"guard.warn": 4, "guard.log": 2, "guard.block": 1, "pii.detected": 2, "credential.put": 1} {
		if count[action] < min {
			t.Errorf("%d %s events, want at least %d; events: %v", count[action], action, min, count)
		}
	}
	// A bare family name selects its events, as its prefix with a dot does.
	for family, want := range map[string]int{"pii": count["pii.detected"], "guard": count["guard.warn"] + count["guard.log"] + count["guard.block"]} {
		got, _ := c.listAll(url.Values{"action": {family}})
		if len(got) != want || want == 0 {
			t.Errorf("GET /api/audit-logs?action=%s = %d events, want %d", family, len(got), want)
		}
		for _, e := range got {
			if !strings.HasPrefix(e.Action, family+".") {
				t.Errorf("action=%s listed %s", family, e.Action)
			}
		}
	}
	var directions []string
	for _, e := range events {
		if e.Action == "guard.warn" {
			var d map[string]any
			_ = json.Unmarshal(e.Details, &d)
			directions = append(directions, d["direction"].(string))
		}
	}
	if !strings.Contains(strings.Join(directions, ","), "output") {
		t.Errorf("guard.warn directions = %v, want the output scan too", directions)
	}

	rows, err := env.Store.AuditLog().List(t.Context(), store.AuditFilter{WorkspaceID: env.Workspace.ID, Limit: store.MaxAuditLimit})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows.Events) != len(events) {
		t.Errorf("store holds %d rows, the API listed %d", len(rows.Events), len(events))
	}
	stored, err := json.Marshal(rows)
	if err != nil {
		t.Fatal(err)
	}

	logs := env.Log.String()
	if !strings.Contains(logs, "[GUARD] direction=input action=warn") || !strings.Contains(logs, "[PII] direction=input") {
		t.Errorf("the log lacks the guard and PII audit lines:\n%s", logs)
	}
	haystacks := map[string]string{"server log": logs, "GET /api/audit-logs": bodies, "audit rows": string(stored)}
	for where, text := range haystacks {
		for _, p := range personalData {
			if strings.Contains(text, p.value) {
				t.Errorf("%s contains the %s %q", where, p.kind, p.value)
			}
			if d := digitsOnly(p.value); len(d) >= 6 && strings.Contains(text, d) {
				t.Errorf("%s contains the %s %q as digits %s", where, p.kind, p.value, d)
			}
		}
		if strings.Contains(text, upstreamKey) {
			t.Errorf("%s contains the stored API key", where)
		}
	}
	if t.Failed() {
		t.Logf("server log:\n%s\naudit rows: %s", logs, stored)
	}
}

func hasAction(events []store.AuditEvent, action string) bool {
	for _, e := range events {
		if e.Action == action {
			return true
		}
	}
	return false
}

func digitsOnly(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func apiKeyID(t *testing.T, env *servertest.Env) string {
	t.Helper()
	keys, err := env.Store.APIKeys().List(t.Context(), env.Workspace.ID)
	if err != nil || len(keys) != 1 {
		t.Fatalf("API keys = %v, %v; want the test's one", keys, err)
	}
	return keys[0].ID
}

// waitAudit polls the audit log until it holds at least n events.
func (c client) waitAudit(n int) []store.AuditEvent {
	c.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		events, _ := c.listAll(url.Values{})
		if len(events) >= n || time.Now().After(deadline) {
			return events
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestAuditLogAPI(t *testing.T) {
	env, _, c := newEnv(t)
	var a store.Agent
	c.json("POST", "/api/agents", `{"name":"writer","model":"fake/m","instructions":"Write."}`, http.StatusCreated, &a)
	c.json("PUT", "/api/agents/"+a.ID, `{"name":"writer","model":"fake/m2","instructions":"Write more."}`, http.StatusOK, nil)
	if resp, body := c.do("DELETE", "/api/agents/"+a.ID, ""); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE agent = %d %s", resp.StatusCode, body)
	}
	all := c.waitAudit(3)
	var actions []string
	for _, e := range all {
		actions = append(actions, e.Action+" "+e.Target)
	}
	if want := []string{"agent.delete agent:writer", "agent.update agent:writer", "agent.create agent:writer"}; strings.Join(actions, ",") != strings.Join(want, ",") {
		t.Fatalf("audit log = %v, want %v (newest first)", actions, want)
	}
	actor := all[0].Actor
	if !strings.HasPrefix(actor, "apikey:") {
		t.Errorf("actor = %q, want the request's API key", actor)
	}

	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	tests := []struct {
		query string
		want  int
	}{
		{"action=agent.", 3},
		{"action=agent.create", 1},
		{"action=agent", 3}, // a bare family name is its prefix
		{"action=agen", 0},
		{"target=agent:writer", 3},
		{"actor=" + url.QueryEscape(actor), 3},
		{"actor=cli", 0},
		{"since=" + past, 3},
		{"since=" + future, 0},
		{"until=" + past, 0},
		{"limit=1", 3}, // listAll follows next
	}
	for _, tt := range tests {
		q, err := url.ParseQuery(tt.query)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := c.listAll(q)
		seen := map[string]bool{}
		for _, e := range got {
			if seen[e.ID] {
				t.Errorf("%s: event %s listed twice", tt.query, e.ID)
			}
			seen[e.ID] = true
		}
		if len(got) != tt.want {
			t.Errorf("GET /api/audit-logs?%s = %d events, want %d", tt.query, len(got), tt.want)
		}
	}
	var page auditEvents
	c.json("GET", "/api/audit-logs?limit=2", "", http.StatusOK, &page)
	if len(page.Events) != 2 || page.Next == "" {
		t.Errorf("limit=2: %d events, next %q; want 2 and a cursor", len(page.Events), page.Next)
	}

	for _, tt := range []struct{ query, param string }{
		{"since=yesterday", "since"},
		{"until=2026-13-01T00:00:00Z", "until"},
		{"since=" + future + "&until=" + past, "until"},
		{"limit=0", "limit"},
		{"limit=abc", "limit"},
		{"limit=1001", "limit"},
		{"cursor=not-a-cursor", "cursor"},
	} {
		resp, body := c.do("GET", "/api/audit-logs?"+tt.query, "")
		if d := wantError(t, resp, body, http.StatusBadRequest, "invalid_request"); d.Param != tt.param {
			t.Errorf("?%s: param = %v, want %s", tt.query, d.Param, tt.param)
		}
	}

	// Another workspace sees none of it.
	other, err := env.Store.Workspaces().Create(t.Context(), store.Workspace{Name: "other"})
	if err != nil {
		t.Fatal(err)
	}
	oc := client{t: t, base: env.URL, key: servertest.CreateKey(t, env.Store, other.ID)}
	if got, _ := oc.listAll(url.Values{}); len(got) != 0 {
		t.Errorf("another workspace lists %d events, want none", len(got))
	}
	if got, _ := oc.listAll(url.Values{"cursor": {page.Next}}); len(got) != 0 {
		t.Errorf("another workspace with this workspace's cursor lists %d events, want none", len(got))
	}
}

func TestAuditLogWorkflowEvents(t *testing.T) {
	e := newWorkflowEnv(t)
	wf := e.create(simpleFlow)
	e.c.json("PUT", "/api/workflows/"+wf.ID, strings.Replace(simpleFlow, "Draft:", "Draft v2:", 1), http.StatusOK, nil)
	e.c.json("POST", "/api/workflows/"+wf.ID+"/versions/1/restore", "", http.StatusOK, nil)
	if resp, body := e.c.do("DELETE", "/api/workflows/"+wf.ID, ""); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE workflow = %d %s", resp.StatusCode, body)
	}
	events := e.c.waitAudit(4)
	var got []string
	for _, ev := range events {
		if ev.Target != "workflow:"+wf.ID {
			t.Errorf("%s target = %q, want workflow:%s", ev.Action, ev.Target, wf.ID)
		}
		got = append(got, ev.Action)
	}
	if want := "workflow.delete,workflow.restore,workflow.update,workflow.create"; strings.Join(got, ",") != want {
		t.Errorf("audit log = %v, want %s", got, want)
	}
	for _, ev := range events {
		if ev.Action == "workflow.restore" && !strings.Contains(string(ev.Details), `"restored_version":1`) {
			t.Errorf("workflow.restore details = %s, want restored_version 1", ev.Details)
		}
	}
}
