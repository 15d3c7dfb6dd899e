package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/llm/middleware"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/server"
	"github.com/agentcraftlab/agentcraft/server/httpapi"
	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/store"
)

// noRedirects answers redirects to the test rather than following them:
// an API answering a redirect has failed the client.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// client sends raw HTTP requests to a test server.
type client struct {
	t    *testing.T
	base string
	key  string // "" sends no Authorization header
}

func (c client) do(method, path, body string) (*http.Response, []byte) {
	c.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, c.base+path, r)
	if err != nil {
		c.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp, b
}

// json sends a request and decodes a JSON answer of status want into v.
func (c client) json(method, path, body string, want int, v any) {
	c.t.Helper()
	resp, b := c.do(method, path, body)
	if resp.StatusCode != want {
		c.t.Fatalf("%s %s = %d %s, want %d", method, path, resp.StatusCode, b, want)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			c.t.Fatalf("%s %s: decode %s: %v", method, path, b, err)
		}
	}
}

// errorDetail is the inside of an error answer.
type errorDetail struct {
	Message string
	Type    string
	Param   any
	Code    any
}

// wantError checks that the answer is an error of the given status and
// code in OpenAI's shape, {"error":{"message","type","param","code"}}
// with nothing more or less, and returns its detail.
func wantError(t *testing.T, resp *http.Response, body []byte, status int, code string) errorDetail {
	t.Helper()
	if resp.StatusCode != status {
		t.Errorf("%s %s = %d, want %d (body %s)", resp.Request.Method, resp.Request.URL.Path, resp.StatusCode, status, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s %s: Content-Type %q, want application/json", resp.Request.Method, resp.Request.URL.Path, ct)
	}
	var outer map[string]map[string]any
	if err := json.Unmarshal(body, &outer); err != nil {
		t.Fatalf("error body %s is not {\"error\":{...}}: %v", body, err)
	}
	inner, ok := outer["error"]
	if !ok || len(outer) != 1 {
		t.Fatalf("error body %s: want exactly the key error", body)
	}
	var keys []string
	for k := range inner {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if diff := cmp.Diff([]string{"code", "message", "param", "type"}, keys); diff != "" {
		t.Errorf("error body %s: keys (-want +got):\n%s", body, diff)
	}
	d := errorDetail{Param: inner["param"], Code: inner["code"]}
	d.Message, _ = inner["message"].(string)
	d.Type, _ = inner["type"].(string)
	if d.Message == "" || d.Type == "" {
		t.Errorf("error body %s: message and type must be non-empty strings", body)
	}
	if d.Code != code {
		t.Errorf("error body %s: code %v, want %q", body, d.Code, code)
	}
	return d
}

// fakeProvider is provider "fake" on a scripted OpenAI-compatible fake
// that does not retry.
func fakeProvider(fake *llmtest.Server) platform.ProviderConfig {
	off := false
	return platform.ProviderConfig{Name: "fake", Type: "openai", BaseURL: fake.URL + "/v1", APIKey: "upstream-secret",
		Middleware: middleware.Settings{Retry: middleware.RetrySettings{Enabled: &off}}}
}

func newEnv(t *testing.T, agents ...platform.AgentSpec) (*servertest.Env, *llmtest.Server, client) {
	t.Helper()
	fake := llmtest.NewOpenAI(t)
	env := servertest.New(t, &servertest.Options{Providers: []platform.ProviderConfig{fakeProvider(fake)}, Agents: agents})
	return env, fake, client{t: t, base: env.URL, key: env.Key}
}

var helper = platform.AgentSpec{Name: "helper", Model: "fake/fake-model", Instructions: "Help.", Tools: []string{"calculator"}}

func TestAgentsCRUD(t *testing.T) {
	t.Parallel()
	env, _, c := newEnv(t)

	var created store.Agent
	c.json("POST", "/api/agents", `{"name":"writer","model":"fake/fake-model","instructions":"Write.","tools":["calculator"],"max_steps":4,"middleware":{"retry":{"max_retries":1}}}`,
		http.StatusCreated, &created)
	want := store.Agent{
		WorkspaceID: env.Workspace.ID, Name: "writer", Model: "fake/fake-model", Instructions: "Write.",
		Tools: []string{"calculator"}, Params: store.AgentParams{MaxSteps: 4, Middleware: json.RawMessage(`{"retry":{"max_retries":1}}`)},
		Source: store.SourceAPI,
	}
	ignore := cmpopts.IgnoreFields(store.Agent{}, "ID", "CreatedAt", "UpdatedAt")
	if diff := cmp.Diff(want, created, ignore); diff != "" {
		t.Errorf("POST answer (-want +got):\n%s", diff)
	}
	if created.ID == "" || created.CreatedAt.IsZero() {
		t.Errorf("created agent has no id or creation time: %+v", created)
	}

	var list struct{ Data []store.Agent }
	c.json("GET", "/api/agents", "", http.StatusOK, &list)
	if diff := cmp.Diff([]store.Agent{created}, list.Data); diff != "" {
		t.Errorf("GET /api/agents (-want +got):\n%s", diff)
	}
	var got store.Agent
	c.json("GET", "/api/agents/"+created.ID, "", http.StatusOK, &got)
	if diff := cmp.Diff(created, got); diff != "" {
		t.Errorf("GET /api/agents/{id} (-want +got):\n%s", diff)
	}

	if _, err := env.Platform.Agent(context.Background(), env.Workspace.ID, "writer"); err != nil { // cached now
		t.Fatal(err)
	}
	var updated store.Agent
	c.json("PUT", "/api/agents/"+created.ID, `{"name":"writer","model":"fake/fake-model","instructions":"Rewrite."}`, http.StatusOK, &updated)
	if updated.ID != created.ID || updated.Instructions != "Rewrite." || len(updated.Tools) != 0 {
		t.Errorf("PUT answer = %+v, want the same agent with the new definition", updated)
	}
	c.json("GET", "/api/agents/"+created.ID, "", http.StatusOK, &got)
	if got.Instructions != "Rewrite." {
		t.Errorf("after PUT, instructions = %q", got.Instructions)
	}
	// The running platform uses the new definition at once.
	a, err := env.Platform.Agent(context.Background(), env.Workspace.ID, "writer")
	if err != nil || a.Runtime.Instructions != "Rewrite." {
		t.Errorf("after PUT, the platform resolves %+v, %v", a, err)
	}

	resp, body := c.do("DELETE", "/api/agents/"+created.ID, "")
	if resp.StatusCode != http.StatusNoContent || len(body) != 0 {
		t.Errorf("DELETE = %d %q, want 204 without body", resp.StatusCode, body)
	}
	resp, body = c.do("GET", "/api/agents/"+created.ID, "")
	wantError(t, resp, body, http.StatusNotFound, "not_found")
	resp, body = c.do("DELETE", "/api/agents/"+created.ID, "")
	wantError(t, resp, body, http.StatusNotFound, "not_found")
	resp, body = c.do("PUT", "/api/agents/"+created.ID, `{"name":"writer","model":"fake/fake-model"}`)
	wantError(t, resp, body, http.StatusNotFound, "not_found")
	c.json("GET", "/api/agents", "", http.StatusOK, &list)
	if len(list.Data) != 0 {
		t.Errorf("after DELETE, agents = %+v", list.Data)
	}
}

func TestAgentsBadRequests(t *testing.T) {
	t.Parallel()
	fake := llmtest.NewOpenAI(t)
	env := servertest.New(t, &servertest.Options{Providers: []platform.ProviderConfig{fakeProvider(fake)}, MaxBodyBytes: 1 << 10})
	c := client{t: t, base: env.URL, key: env.Key}
	c.json("POST", "/api/agents", `{"name":"taken","model":"fake/m"}`, http.StatusCreated, nil)

	tests := []struct {
		name, body string
		status     int
		code       string
		mention    string // the message must contain it
	}{
		{"duplicate name", `{"name":"taken","model":"fake/m"}`, http.StatusConflict, "conflict", `an agent named "taken" already exists`},
		{"unknown field", `{"name":"a","model":"fake/m","colour":"blue"}`, http.StatusBadRequest, "invalid_request", `"colour"`},
		{"empty body", ``, http.StatusBadRequest, "invalid_request", "empty"},
		{"not JSON", `name=a`, http.StatusBadRequest, "invalid_request", "not valid"},
		{"unknown provider", `{"name":"a","model":"nowhere/m"}`, http.StatusBadRequest, "invalid_request", `"nowhere"`},
		{"unknown tool", `{"name":"a","model":"fake/m","tools":["abacus"]}`, http.StatusBadRequest, "invalid_request", `"abacus"`},
		{"tool listed twice", `{"name":"a","model":"fake/m","tools":["calculator","calculator"]}`, http.StatusBadRequest, "invalid_request", `"calculator" is listed twice`},
		{"model without provider", `{"name":"a","model":"gpt-4o"}`, http.StatusBadRequest, "invalid_request", "PROVIDER/MODEL"},
		{"no name", `{"model":"fake/m"}`, http.StatusBadRequest, "invalid_request", "name"},
		{"bad middleware", `{"name":"a","model":"fake/m","middleware":{"rate_limit":{"rps":-2}}}`, http.StatusBadRequest, "invalid_request", "rate_limit.rps"},
		{"temperature above 2", `{"name":"a","model":"fake/m","temperature":5}`, http.StatusBadRequest, "invalid_request", "temperature 5; use a value from 0 to 2"},
		{"negative temperature", `{"name":"a","model":"fake/m","temperature":-1}`, http.StatusBadRequest, "invalid_request", "temperature -1"},
		{"too large", `{"name":"a","model":"fake/m","instructions":"` + strings.Repeat("x", 2<<10) + `"}`, http.StatusRequestEntityTooLarge, "request_too_large", "too large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := client{t: t, base: env.URL, key: env.Key}
			resp, body := c.do("POST", "/api/agents", tt.body)
			d := wantError(t, resp, body, tt.status, tt.code)
			if !strings.Contains(d.Message, tt.mention) {
				t.Errorf("message %q does not mention %s", d.Message, tt.mention)
			}
		})
	}
	var list struct{ Data []store.Agent }
	c.json("GET", "/api/agents", "", http.StatusOK, &list)
	if len(list.Data) != 1 {
		t.Errorf("refused agents were stored: %+v", list.Data)
	}
}

// TestAgentsUnknownKeysNamedByPath checks that a misspelt key is refused
// wherever it stands, inside the middleware object too, with its path as
// the error's param, on POST and PUT; known keys at every level pass.
func TestAgentsUnknownKeysNamedByPath(t *testing.T) {
	t.Parallel()
	fake := llmtest.NewOpenAI(t)
	env := servertest.New(t, &servertest.Options{Providers: []platform.ProviderConfig{fakeProvider(fake)}})
	c := client{t: t, base: env.URL, key: env.Key}
	var created store.Agent
	c.json("POST", "/api/agents", `{"name":"ok","model":"fake/m","middleware":{"tool_progress":true,"guard":{"rules":[{"name":"r","keywords":["x"],"action":"block"}],"scan_output":true},"pii":{"mode":"mask"},"retry":{"max_retries":1}}}`,
		http.StatusCreated, &created)

	tests := []struct {
		name, body, param string
	}{
		{"top level", `{"name":"a","model":"fake/m","nmae":"b"}`, "nmae"},
		{"middleware key", `{"name":"a","model":"fake/m","middleware":{"gaurd":{"injection":true}}}`, "middleware.gaurd"},
		{"guard key", `{"name":"a","model":"fake/m","middleware":{"guard":{"scan_ouput":true}}}`, "middleware.guard.scan_ouput"},
		{"guard rule key", `{"name":"a","model":"fake/m","middleware":{"guard":{"rules":[{"name":"r","keywords":["x"],"action":"block","directon":"output"}]}}}`, "middleware.guard.rules[0].directon"},
		{"retry key", `{"name":"a","model":"fake/m","middleware":{"retry":{"max_retry":1}}}`, "middleware.retry.max_retry"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := client{t: t, base: env.URL, key: env.Key}
			for _, req := range []struct{ method, path string }{{"POST", "/api/agents"}, {"PUT", "/api/agents/" + created.ID}} {
				resp, body := c.do(req.method, req.path, tt.body)
				d := wantError(t, resp, body, http.StatusBadRequest, "invalid_request")
				if d.Param != tt.param || !strings.Contains(d.Message, `"`+tt.param+`"`) {
					t.Errorf("%s %s: param %v, message %q; want both to name %s", req.method, req.path, d.Param, d.Message, tt.param)
				}
			}
		})
	}
	var list struct{ Data []store.Agent }
	c.json("GET", "/api/agents", "", http.StatusOK, &list)
	if len(list.Data) != 1 || list.Data[0].Name != "ok" {
		t.Errorf("refused agents were stored or changed: %+v", list.Data)
	}
}

// TestAgentsByNameAndPlainConflicts: an agent can be fetched by its name
// as by its id; a name taken on POST or PUT is a 409 with a plain message,
// and no store error shows the driver's text.
func TestAgentsByNameAndPlainConflicts(t *testing.T) {
	t.Parallel()
	fake := llmtest.NewOpenAI(t)
	env := servertest.New(t, &servertest.Options{Providers: []platform.ProviderConfig{fakeProvider(fake)}})
	c := client{t: t, base: env.URL, key: env.Key}
	var writer, other, got store.Agent
	c.json("POST", "/api/agents", `{"name":"writer","model":"fake/m"}`, http.StatusCreated, &writer)
	c.json("POST", "/api/agents", `{"name":"other","model":"fake/m"}`, http.StatusCreated, &other)
	c.json("GET", "/api/agents/writer", "", http.StatusOK, &got)
	if got.ID != writer.ID {
		t.Errorf("GET /api/agents/writer = %+v, want agent %s", got, writer.ID)
	}
	tests := []struct {
		method, path, body string
		status             int
		code, message      string
	}{
		{"POST", "/api/agents", `{"name":"writer","model":"fake/m"}`, http.StatusConflict, "conflict",
			`an agent named "writer" already exists in this workspace: choose another name`},
		{"PUT", "/api/agents/" + other.ID, `{"name":"writer","model":"fake/m"}`, http.StatusConflict, "conflict",
			`an agent named "writer" already exists in this workspace: choose another name`},
		{"GET", "/api/agents/nobody", "", http.StatusNotFound, "not_found", `agent "nobody" does not exist in this workspace`},
		{"PUT", "/api/agents/nobody", `{"name":"x","model":"fake/m"}`, http.StatusNotFound, "not_found", `agent "nobody" does not exist in this workspace`},
		{"DELETE", "/api/agents/nobody", "", http.StatusNotFound, "not_found", "not found"},
	}
	for _, tt := range tests {
		resp, body := c.do(tt.method, tt.path, tt.body)
		d := wantError(t, resp, body, tt.status, tt.code)
		if d.Message != tt.message {
			t.Errorf("%s %s: message %q, want %q", tt.method, tt.path, d.Message, tt.message)
		}
		for _, internal := range []string{"sqlite", "postgres", "UNIQUE", "constraint", "store:"} {
			if strings.Contains(string(body), internal) {
				t.Errorf("%s %s: answer %s shows %q", tt.method, tt.path, body, internal)
			}
		}
	}
}

func TestConfigAgentIsReadOnly(t *testing.T) {
	t.Parallel()
	_, _, c := newEnv(t, helper)
	var list struct{ Data []store.Agent }
	c.json("GET", "/api/agents", "", http.StatusOK, &list)
	if len(list.Data) != 1 || list.Data[0].Source != store.SourceConfig {
		t.Fatalf("agents = %+v, want the config agent", list.Data)
	}
	id := list.Data[0].ID
	resp, body := c.do("PUT", "/api/agents/"+id, `{"name":"helper","model":"fake/fake-model","instructions":"Changed."}`)
	wantError(t, resp, body, http.StatusConflict, "defined_in_config")
	resp, body = c.do("DELETE", "/api/agents/"+id, "")
	wantError(t, resp, body, http.StatusConflict, "defined_in_config")
	var got store.Agent
	c.json("GET", "/api/agents/"+id, "", http.StatusOK, &got)
	if got.Instructions != "Help." {
		t.Errorf("config agent changed to %+v", got)
	}
}

func TestCredentials(t *testing.T) {
	t.Parallel()
	fake := llmtest.NewOpenAI(t)
	keyless := platform.ProviderConfig{Name: "keyless", Type: "openai", BaseURL: fake.URL + "/v1"}
	env := servertest.New(t, &servertest.Options{Providers: []platform.ProviderConfig{fakeProvider(fake), keyless}})
	c := client{t: t, base: env.URL, key: env.Key}

	resp, body := c.do("POST", "/api/credentials", `{"provider":"keyless"}`)
	if d := wantError(t, resp, body, http.StatusBadRequest, "invalid_request"); d.Param != "api_key" {
		t.Errorf("param = %v, want api_key", d.Param)
	}
	resp, body = c.do("POST", "/api/credentials", `{"provider":"keyless","api_key":"   "}`)
	wantError(t, resp, body, http.StatusBadRequest, "invalid_request")
	resp, body = c.do("POST", "/api/credentials", `{"api_key":"sk-x"}`)
	if d := wantError(t, resp, body, http.StatusBadRequest, "invalid_request"); d.Param != "provider" {
		t.Errorf("param = %v, want provider", d.Param)
	}
	resp, body = c.do("POST", "/api/credentials", `{"provider":"mistral","api_key":"sk-x"}`)
	wantError(t, resp, body, http.StatusBadRequest, "invalid_request")

	const key = "sk-stored-secret-0123456789"
	c.json("POST", "/api/credentials", `{"provider":"keyless","api_key":"`+key+`"}`, http.StatusOK, nil)

	resp, body = c.do("GET", "/api/credentials", "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/credentials = %d %s", resp.StatusCode, body)
	}
	var creds struct{ Data []map[string]any }
	if err := json.Unmarshal(body, &creds); err != nil {
		t.Fatal(err)
	}
	if len(creds.Data) != 1 || creds.Data[0]["provider"] != "keyless" {
		t.Fatalf("credentials = %s, want keyless", body)
	}
	var fields []string
	for k := range creds.Data[0] {
		fields = append(fields, k)
	}
	slices.Sort(fields)
	if diff := cmp.Diff([]string{"created_at", "provider", "updated_at"}, fields); diff != "" {
		t.Errorf("credential fields (-want +got):\n%s", diff)
	}

	resp, body = c.do("GET", "/api/providers", "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/providers = %d %s", resp.StatusCode, body)
	}
	var provs struct{ Data []platform.ProviderInfo }
	if err := json.Unmarshal(body, &provs); err != nil {
		t.Fatal(err)
	}
	wantProvs := []platform.ProviderInfo{
		{Name: "fake", Type: "openai", BaseURL: fake.URL + "/v1", Origin: platform.OriginConfig, HasKey: true},
		{Name: "keyless", Type: "openai", BaseURL: fake.URL + "/v1", Origin: platform.OriginConfig, HasKey: true},
	}
	if diff := cmp.Diff(wantProvs, provs.Data); diff != "" {
		t.Errorf("GET /api/providers (-want +got):\n%s", diff)
	}

	// No answer carries key material: neither the stored key nor the
	// configured one.
	for _, path := range []string{"/api/credentials", "/api/providers", "/api/agents"} {
		_, body := c.do("GET", path, "")
		for _, secret := range []string{key, "upstream-secret"} {
			if strings.Contains(string(body), secret) {
				t.Errorf("GET %s reveals a key: %s", path, body)
			}
		}
	}
}

func TestTools(t *testing.T) {
	t.Parallel()
	_, _, c := newEnv(t)
	var tools struct {
		Data []struct {
			Name, Description, Capability, Source string
			InputSchema                           map[string]any `json:"input_schema"`
		}
	}
	c.json("GET", "/api/tools", "", http.StatusOK, &tools)
	// Without a file sandbox or an outbound HTTP client configured, the
	// tools that need them are absent.
	want := map[string]string{"calculator": "low", "current_time": "low", "json_query": "low", "ocr_image": "medium", "run_javascript": "medium", "run_starlark": "medium"}
	var names []string
	for _, tl := range tools.Data {
		names = append(names, tl.Name)
		if tl.Capability != want[tl.Name] || tl.Source != "builtin" || tl.Description == "" || tl.InputSchema["type"] != "object" {
			t.Errorf("tool %+v: want capability %q, source builtin, a description and an object schema", tl, want[tl.Name])
		}
	}
	if diff := cmp.Diff([]string{"calculator", "current_time", "json_query", "ocr_image", "run_javascript", "run_starlark"}, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

func TestUsage(t *testing.T) {
	t.Parallel()
	env, fake, c := newEnv(t, helper)
	fake.Push(llmtest.Turn{Text: "Hello!", Usage: llm.Usage{InputTokens: 12, OutputTokens: 3}})
	var completion struct {
		Choices []struct{ Message struct{ Content string } }
	}
	c.json("POST", "/v1/chat/completions", `{"model":"helper","messages":[{"role":"user","content":"hi"}]}`, http.StatusOK, &completion)
	if len(completion.Choices) != 1 || completion.Choices[0].Message.Content != "Hello!" {
		t.Fatalf("completion = %+v", completion)
	}
	env.Platform.Stop() // flush the usage recorder

	var usage struct {
		Since time.Time
		Data  []store.UsageSummary
	}
	c.json("GET", "/api/usage", "", http.StatusOK, &usage)
	// fake-model has no price: it costs 0 and counts as unpriced.
	want := []store.UsageSummary{{Agent: "helper", Provider: "fake", Model: "fake-model", Requests: 1, InputTokens: 12, OutputTokens: 3, Unpriced: 1}}
	if diff := cmp.Diff(want, usage.Data, cmpopts.IgnoreFields(store.UsageSummary{}, "LatencyMs", "UpstreamMs")); diff != "" {
		t.Errorf("GET /api/usage (-want +got):\n%s", diff)
	}
	if d := time.Since(usage.Since) - 24*time.Hour; d < -time.Minute || d > time.Minute {
		t.Errorf("default since = %v, want a day ago", usage.Since)
	}

	since := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	c.json("GET", "/api/usage?since="+since, "", http.StatusOK, &usage)
	if len(usage.Data) != 0 {
		t.Errorf("usage since %s = %+v, want none", since, usage.Data)
	}
	// Another workspace sees none of it.
	wsB, err := env.Store.Workspaces().GetOrCreate(context.Background(), "b")
	if err != nil {
		t.Fatal(err)
	}
	client{t: t, base: env.URL, key: servertest.CreateKey(t, env.Store, wsB.ID)}.json("GET", "/api/usage", "", http.StatusOK, &usage)
	if len(usage.Data) != 0 {
		t.Errorf("workspace B sees usage %+v", usage.Data)
	}
	resp, body := c.do("GET", "/api/usage?since=yesterday", "")
	if d := wantError(t, resp, body, http.StatusBadRequest, "invalid_request"); d.Param != "since" {
		t.Errorf("param = %v, want since", d.Param)
	}
}

func TestWorkspaceIsolation(t *testing.T) {
	t.Parallel()
	env, _, a := newEnv(t, helper)
	ctx := context.Background()
	var created store.Agent
	a.json("POST", "/api/agents", `{"name":"writer","model":"fake/fake-model"}`, http.StatusCreated, &created)
	a.json("POST", "/api/credentials", `{"provider":"openai","api_key":"sk-a"}`, http.StatusOK, nil)

	wsB, err := env.Store.Workspaces().GetOrCreate(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	b := client{t: t, base: env.URL, key: servertest.CreateKey(t, env.Store, wsB.ID)}
	for _, path := range []string{"/api/agents", "/api/credentials", "/v1/models"} {
		var list struct{ Data []json.RawMessage }
		b.json("GET", path, "", http.StatusOK, &list)
		if len(list.Data) != 0 {
			t.Errorf("workspace B: GET %s = %s, want nothing of A's", path, list.Data)
		}
	}
	var provs struct{ Data []platform.ProviderInfo }
	b.json("GET", "/api/providers", "", http.StatusOK, &provs)
	if len(provs.Data) != 1 || provs.Data[0].Name != "fake" {
		t.Errorf("workspace B providers = %+v, want the config provider only", provs.Data)
	}
	resp, body := b.do("GET", "/api/agents/"+created.ID, "")
	wantError(t, resp, body, http.StatusNotFound, "not_found")
	resp, body = b.do("PUT", "/api/agents/"+created.ID, `{"name":"writer","model":"fake/fake-model","instructions":"B was here"}`)
	wantError(t, resp, body, http.StatusNotFound, "not_found")
	resp, body = b.do("DELETE", "/api/agents/"+created.ID, "")
	wantError(t, resp, body, http.StatusNotFound, "not_found")
	resp, body = b.do("POST", "/v1/chat/completions", `{"model":"helper","messages":[{"role":"user","content":"hi"}]}`)
	wantError(t, resp, body, http.StatusNotFound, "model_not_found")

	var got store.Agent
	a.json("GET", "/api/agents/"+created.ID, "", http.StatusOK, &got)
	if got.Instructions != "" {
		t.Errorf("workspace B changed A's agent: %+v", got)
	}
	// B may use the same names.
	b.json("POST", "/api/agents", `{"name":"writer","model":"fake/fake-model"}`, http.StatusCreated, nil)
}

func TestAuth(t *testing.T) {
	t.Parallel()
	env, _, c := newEnv(t, helper)
	for _, path := range []string{"/api/agents", "/v1/models", "/api/nowhere"} {
		resp, body := client{t: t, base: env.URL}.do("GET", path, "")
		wantError(t, resp, body, http.StatusUnauthorized, "missing_api_key")
		if resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("GET %s without key: no WWW-Authenticate", path)
		}
		resp, body = client{t: t, base: env.URL, key: "ac_not-a-key"}.do("GET", path, "")
		wantError(t, resp, body, http.StatusUnauthorized, "invalid_api_key")
	}
	// The health checks need no key.
	resp, body := client{t: t, base: env.URL}.do("GET", "/health", "")
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /health = %d %s", resp.StatusCode, body)
	}
	c.json("GET", "/api/agents", "", http.StatusOK, nil)
}

func TestAuthNone(t *testing.T) {
	t.Parallel()
	fake := llmtest.NewOpenAI(t)
	env := servertest.New(t, &servertest.Options{Auth: server.AuthNone, Providers: []platform.ProviderConfig{fakeProvider(fake)}, Agents: []platform.AgentSpec{helper}})
	c := client{t: t, base: env.URL}
	var list struct{ Data []store.Agent }
	c.json("GET", "/api/agents", "", http.StatusOK, &list)
	if len(list.Data) != 1 || list.Data[0].Name != "helper" || list.Data[0].WorkspaceID != env.Workspace.ID {
		t.Errorf("agents without a key = %+v, want the default workspace's helper", list.Data)
	}
	var created store.Agent
	c.json("POST", "/api/agents", `{"name":"writer","model":"fake/fake-model"}`, http.StatusCreated, &created)
	if created.WorkspaceID != env.Workspace.ID {
		t.Errorf("agent created in workspace %s, want the default %s", created.WorkspaceID, env.Workspace.ID)
	}
}

func TestUnknownRoutes(t *testing.T) {
	t.Parallel()
	env, _, c := newEnv(t)
	for _, tt := range []struct{ method, path, key string }{
		{"GET", "/api/nowhere", env.Key},
		{"GET", "/v1/nowhere", env.Key},
		{"PATCH", "/api/agents", env.Key},
		{"GET", "/nowhere", ""},
		{"POST", "/", ""},
	} {
		resp, body := client{t: t, base: env.URL, key: tt.key}.do(tt.method, tt.path, "")
		d := wantError(t, resp, body, http.StatusNotFound, "not_found")
		if !strings.Contains(d.Message, tt.path) {
			t.Errorf("%s %s: message %q does not name the path", tt.method, tt.path, d.Message)
		}
	}
	// Doubled slashes reach the route rather than a redirect, which some
	// clients do not follow for a POST.
	c.json("POST", "//api//agents", `{"name":"writer","model":"fake/fake-model"}`, http.StatusCreated, nil)
}

// TestRevokedKey: `agentcraft keys revoke` runs in another process and
// writes the store only. Within Options.KeyTTL the server answers the key
// from memory; with a lifetime passed (here: none) it reads the store and
// refuses the key, and goes on refusing it.
func TestRevokedKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		ttl    time.Duration
		status int
	}{{"cached", time.Hour, http.StatusOK}, {"expired", -1, http.StatusUnauthorized}} {
		env := servertest.New(t, &servertest.Options{KeyTTL: tc.ttl})
		c := client{t: t, base: env.URL, key: env.Key}
		c.json("GET", "/api/agents", "", http.StatusOK, nil)
		keys, err := env.Store.APIKeys().List(t.Context(), env.Workspace.ID)
		if err != nil || len(keys) != 1 {
			t.Fatalf("keys = %+v, %v", keys, err)
		}
		if err := env.Store.APIKeys().Revoke(t.Context(), env.Workspace.ID, keys[0].ID); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			resp, body := c.do("GET", "/api/agents", "")
			if tc.status == http.StatusOK {
				if resp.StatusCode != http.StatusOK {
					t.Errorf("%s: revoked key within the lifetime = %d %s, want 200 from the cache", tc.name, resp.StatusCode, body)
				}
				continue
			}
			wantError(t, resp, body, tc.status, "invalid_api_key")
		}
	}
}

// chunks reads a chat.completion.chunk stream into the deltas of its
// first choice, as raw JSON objects, failing on anything that is not SSE.
func chunks(t *testing.T, body []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	done := false
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("stream line %q is not data", line)
		}
		if data == "[DONE]" {
			done = true
			continue
		}
		var ch struct {
			Choices []struct {
				Delta map[string]any
			}
			Error json.RawMessage
		}
		if err := json.Unmarshal([]byte(data), &ch); err != nil {
			t.Fatalf("chunk %s: %v", data, err)
		}
		if ch.Error != nil {
			t.Fatalf("stream carries an error: %s", data)
		}
		for _, c := range ch.Choices {
			out = append(out, c.Delta)
		}
	}
	if !done {
		t.Fatalf("stream did not end with [DONE]:\n%s", body)
	}
	return out
}

func TestToolProgress(t *testing.T) {
	t.Parallel()
	for _, progress := range []bool{true, false} {
		t.Run("tool_progress="+map[bool]string{true: "true", false: "false"}[progress], func(t *testing.T) {
			t.Parallel()
			agent := helper
			agent.ToolProgress = progress
			_, fake, c := newEnv(t, agent)
			fake.Push(
				llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "calculator", Arguments: `{"expression":"2+2"}`}}},
				llmtest.Turn{Text: "4"},
			)
			resp, body := c.do("POST", "/v1/chat/completions", `{"model":"helper","stream":true,"messages":[{"role":"user","content":"2+2?"}]}`)
			if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
				t.Fatalf("stream = %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
			}
			var reasoning, content strings.Builder
			for _, d := range chunks(t, body) {
				if _, ok := d["tool_calls"]; ok {
					t.Errorf("the agent's own tool call reached the client: %v", d)
				}
				if s, ok := d["reasoning_content"].(string); ok {
					reasoning.WriteString(s)
				}
				if s, ok := d["content"].(string); ok {
					content.WriteString(s)
				}
			}
			if content.String() != "4" {
				t.Errorf("content = %q, want 4", content.String())
			}
			if progress {
				if r := reasoning.String(); !strings.Contains(r, "calculator") || !strings.Contains(r, "2+2") || !strings.Contains(r, "4") {
					t.Errorf("reasoning_content = %q, want the calculator call and its result", r)
				}
			} else if reasoning.Len() > 0 {
				t.Errorf("reasoning_content = %q without tool_progress", reasoning.String())
			}
			// The calculator ran on the server: its result went back upstream.
			reqs := fake.Requests()
			if len(reqs) != 2 || !bytes.Contains(reqs[1].Body, []byte(`"role":"tool"`)) {
				t.Errorf("upstream requests = %d; the second must carry the tool result", len(reqs))
			}
		})
	}
}

// TestMounts: Options.Mounts serve further surfaces beside the API, behind
// the API key when they ask for it, and a colliding pattern is an error
// naming it rather than a panic.
func TestMounts(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, nil)
	whoami := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pr, _ := platform.PrincipalFrom(r.Context())
		fmt.Fprintf(w, "workspace=%s key=%s", pr.WorkspaceID, pr.APIKeyID)
	})
	srv, err := server.New(env.Platform, &server.Options{Mounts: []httpapi.Mount{
		{Pattern: "/open", Handler: whoami},
		{Pattern: "GET /keyed/", Handler: whoami, Permission: identity.PermRead},
	}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { hs.Close(); srv.Stop() })
	anon := client{t: t, base: hs.URL}
	if resp, body := anon.do("GET", "/open", ""); resp.StatusCode != http.StatusOK || string(body) != "workspace= key=" {
		t.Errorf("GET /open without a key = %d %q, want 200 and no principal", resp.StatusCode, body)
	}
	resp, body := anon.do("GET", "/keyed/x", "")
	wantError(t, resp, body, http.StatusUnauthorized, "missing_api_key")
	keyed := client{t: t, base: hs.URL, key: env.Key}
	if resp, body := keyed.do("GET", "/keyed/x", ""); resp.StatusCode != http.StatusOK || !strings.HasPrefix(string(body), "workspace="+env.Workspace.ID+" key=") || strings.HasSuffix(string(body), "key=") {
		t.Errorf("GET /keyed/x with the key = %d %q, want the key's principal", resp.StatusCode, body)
	}
	// The API's own routes are untouched.
	keyed.json("GET", "/api/agents", "", http.StatusOK, nil)

	for _, bad := range []httpapi.Mount{{Pattern: "/api/", Handler: whoami}, {Pattern: "/x"}, {Pattern: "", Handler: whoami}} {
		if _, err := server.New(env.Platform, &server.Options{Mounts: []httpapi.Mount{bad}}); err == nil || !strings.Contains(err.Error(), "Options.Mounts[0]") {
			t.Errorf("mount %q: error %v, want one naming Options.Mounts[0]", bad.Pattern, err)
		}
	}
}
