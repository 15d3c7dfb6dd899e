package surfaces

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/store/postgres"
)

const dsnEnv = "AGENTCRAFT_TEST_POSTGRES_DSN"

// The scenario every surface runs.
const (
	storedKey   = "sk-stored-only-in-the-workspace"
	email       = "alice@example.com"
	askOK       = "What is 6*7? Send the answer to " + email + "."
	askBlocked  = "Please read me the launch-codes now."
	blockedRule = "secrets"
	blockedText = "That is covered by the secrets rule."
	unknown     = "nobody"
)

// surface is one way of running the agent: ask sends a message to the
// named agent and returns the answer text, or an error describing the
// failure as the surface reports it.
type surface struct {
	name string
	// usage is the surface's name in usage rows.
	usage string
	ask   func(t *testing.T, agentName, msg string) (string, error)
	// actor is the usage row's and audit event's actor.
	actor string
	// unknownClass is a substring every "unknown agent" failure of the
	// surface carries; blockedClass likewise for a guard block.
	unknownClass string
}

// TestSurfaceConformance runs one scenario through every surface that runs
// an agent, against real processes: `agentcraft serve` (a web tier that
// executes no runs itself) and a separate `agentcraft worker` on one
// PostgreSQL database. The agent's provider has no configured key: the only
// key is a stored workspace credential. For each surface the fake upstream
// must see that key, the server-side tool call and only PII tokens; the
// answer comes back with the e-mail restored; a guard block and an unknown
// agent fail the same way; and each request leaves one usage row naming the
// surface and the actor, and audit events under that actor.
func TestSurfaceConformance(t *testing.T) {
	dsn := os.Getenv(dsnEnv)
	if dsn == "" {
		t.Skipf("set %s: the workflow surface runs on a separate worker process, which needs PostgreSQL", dsnEnv)
	}
	bin := buildBinary(t)
	dbURL := freshDatabase(t, dsn)
	fake := llmtest.NewOpenAI(t)
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "agentcraft.yaml")
	port := freePort(t)
	cfg := fmt.Sprintf(`server:
  addr: "127.0.0.1:%d"
database:
  url: %q
detect_providers: false
workflows:
  execute: false
pricing:
  models:
    up/m: {input: 1.00, cached_input: 0.10, output: 2.00}
budget:
  cache_ttl: 1s
providers:
  - name: up
    type: openai
    base_url: %q
    retry: {enabled: false}
agents:
  - name: helper
    model: up/m
    instructions: "You compute."
    tools: [calculator]
    guard:
      rules: [{name: %s, keywords: ["launch-codes"], action: block, message: %q}]
    pii: {locales: [Global], mode: mask}
`, port, dbURL, fake.URL+"/v1", blockedRule, blockedText)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	var mk [32]byte
	rand.Read(mk[:])
	env := append(os.Environ(), "AGENTCRAFT_MASTER_KEY="+base64.StdEncoding.EncodeToString(mk[:]),
		"OPENAI_API_KEY=", "ANTHROPIC_API_KEY=")

	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	startProcess(t, bin, env, dir, "serve", "--config", cfgPath)
	waitHealthy(t, base)
	startProcess(t, bin, append(env, "AGENTCRAFT_WORKER_ID=conformance-worker"), dir, "worker", "--config", cfgPath)

	key := strings.TrimSpace(runCLI(t, bin, env, dir, "keys", "create", "--workspace", "default", "--name", "conformance", "--role", "owner", "--config", cfgPath))
	clientOut := runCLI(t, bin, env, dir, "mcp", "clients", "create", "--name", "conformance", "--scopes", "agents/*", "--config", cfgPath)
	clientID, clientSecret := field(clientOut, "client_id"), field(clientOut, "client_secret")

	c := &client{t: t, base: base, key: key}
	if status, body := c.post("/api/credentials", map[string]any{"provider": "up", "api_key": storedKey}); status != 200 {
		t.Fatalf("store credential: %d %s", status, body)
	}

	st, err := postgres.Open(t.Context(), dbURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ws, err := st.Workspaces().GetByName(t.Context(), "default")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := st.APIKeys().List(t.Context(), ws.ID)
	if err != nil || len(keys) != 1 {
		t.Fatalf("api keys: %v %v", keys, err)
	}
	keyActor := "apikey:" + keys[0].ID

	mcpSession := c.mcpSession(clientID, clientSecret)
	var wfMu sync.Mutex
	workflows := map[string]string{} // agent name -> workflow id

	surfaces := []surface{
		{name: "v1", usage: "openai", actor: keyActor, unknownClass: "404", ask: func(t *testing.T, a, msg string) (string, error) {
			return c.v1(a, msg, false)
		}},
		{name: "v1-stream", usage: "openai", actor: keyActor, unknownClass: "404", ask: func(t *testing.T, a, msg string) (string, error) {
			return c.v1(a, msg, true)
		}},
		{name: "api-chat", usage: "chat", actor: keyActor, unknownClass: "404", ask: func(t *testing.T, a, msg string) (string, error) {
			return c.apiChat(a, msg)
		}},
		{name: "api-chat-stream", usage: "chat", actor: keyActor, unknownClass: "404", ask: func(t *testing.T, a, msg string) (string, error) {
			return c.apiChatStream(a, msg)
		}},
		{name: "mcp", usage: "mcp", actor: "oauth:" + clientID, unknownClass: "unknown tool", ask: func(t *testing.T, a, msg string) (string, error) {
			return c.mcpAsk(mcpSession, a, msg)
		}},
		{name: "a2a", usage: "a2a", actor: keyActor, unknownClass: "404", ask: func(t *testing.T, a, msg string) (string, error) {
			return c.a2a(a, msg)
		}},
		{name: "workflow-worker", usage: "workflow", actor: "system:conformance-worker", unknownClass: "unknown agent", ask: func(t *testing.T, a, msg string) (string, error) {
			wfMu.Lock()
			defer wfMu.Unlock()
			return c.workflow(workflows, a, msg)
		}},
	}

	seen := map[string]bool{} // ids of usage rows and audit events earlier steps saw
	for _, s := range surfaces {
		t.Run(s.name, func(t *testing.T) {
			c.t = t
			before := len(fake.Requests())
			since := time.Now().Add(-time.Minute)

			// One server tool call and a PII round trip.
			fake.Push(
				llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "calculator", Arguments: `{"expression":"6*7"}`}},
					Usage: llm.Usage{InputTokens: 30, OutputTokens: 5}},
				llmtest.Turn{Text: "6*7 = 42. Sent to [EMAIL_1].", Usage: llm.Usage{InputTokens: 40, OutputTokens: 9}},
			)
			answer, err := s.ask(t, "helper", askOK)
			if err != nil {
				t.Fatalf("ask: %v", err)
			}
			if !strings.Contains(answer, "42") || !strings.Contains(answer, email) {
				t.Errorf("answer = %q, want the tool's 42 and the e-mail restored", answer)
			}
			reqs := fake.Requests()[before:]
			if len(reqs) != 2 {
				t.Fatalf("upstream saw %d requests, want 2 (tool call, then answer)", len(reqs))
			}
			for i, r := range reqs {
				if got := r.Header.Get("Authorization"); got != "Bearer "+storedKey {
					t.Errorf("upstream request %d Authorization = %q, want the stored workspace key", i+1, got)
				}
				if bytes.Contains(r.Body, []byte(email)) {
					t.Errorf("upstream request %d carries the e-mail in clear: %s", i+1, r.Body)
				}
				if !bytes.Contains(r.Body, []byte("[EMAIL_1]")) {
					t.Errorf("upstream request %d lacks the PII token: %s", i+1, r.Body)
				}
			}
			if !bytes.Contains(reqs[1].Body, []byte(`"42"`)) && !bytes.Contains(reqs[1].Body, []byte(`42`)) {
				t.Errorf("second upstream request lacks the calculator's result: %s", reqs[1].Body)
			}
			recs := usageSince(t, st, ws.ID, since, seen, s.usage, 1)
			if len(recs) == 1 {
				r := recs[0]
				if r.Status != store.StatusOK || r.InputTokens != 70 || r.OutputTokens != 14 || r.Actor != s.actor ||
					r.Agent != "helper" || r.Provider != "up" || r.Model != "m" {
					t.Errorf("usage row = %+v, want ok, 70 in / 14 out, actor %s, agent helper on up/m", r, s.actor)
				}
				// Priced where the row is made, on every surface and
				// process: 70 × 1.00 + 14 × 2.00 per million.
				if r.Cost != 98_000 || r.Unpriced {
					t.Errorf("usage row cost = %v (unpriced %v), want 0.000098 at the configured up/m price", r.Cost, r.Unpriced)
				}
				if s.usage == "workflow" && (r.RunID == "" || r.Workflow != "conf-helper") {
					t.Errorf("workflow usage row has no run id or workflow name (want conf-helper): %+v", r)
				}
				if s.usage != "workflow" && r.Workflow != "" {
					t.Errorf("usage row of %s names workflow %q; want none", s.name, r.Workflow)
				}
				if r.LatencyMs < r.UpstreamMs {
					t.Errorf("usage latency %d ms < upstream %d ms", r.LatencyMs, r.UpstreamMs)
				}
			}
			piiSince := auditSince(t, st, ws.ID, since, seen, "pii.")
			if len(piiSince) == 0 {
				t.Errorf("no pii audit event")
			}
			for _, e := range piiSince {
				if e.Actor != s.actor {
					t.Errorf("pii audit event actor = %q, want %q", e.Actor, s.actor)
				}
				if strings.Contains(string(e.Details), email) {
					t.Errorf("audit event holds the e-mail: %s", e.Details)
				}
			}

			// A guard block: nothing reaches the provider; every surface
			// answers the rule's refusal, and usage records the request
			// with no tokens spent.
			before = len(fake.Requests())
			answer, err = s.ask(t, "helper", askBlocked)
			if err != nil || strings.TrimSpace(answer) != blockedText {
				t.Errorf("blocked ask = %q, %v; want the rule's refusal %q", answer, err, blockedText)
			}
			if n := len(fake.Requests()) - before; n != 0 {
				t.Errorf("a blocked message reached the provider (%d requests)", n)
			}
			if recs := usageSince(t, st, ws.ID, since, seen, s.usage, 1); len(recs) == 1 &&
				(recs[0].InputTokens != 0 || recs[0].Actor != s.actor) {
				t.Errorf("blocked usage row = %+v, want no tokens, actor %s", recs[0], s.actor)
			}
			blocks := auditSince(t, st, ws.ID, since, seen, "guard.block")
			if len(blocks) != 1 || blocks[0].Actor != s.actor {
				t.Errorf("guard.block events = %+v, want one by %s", blocks, s.actor)
			}

			// An unknown agent.
			_, err = s.ask(t, unknown, askOK)
			if err == nil || !strings.Contains(err.Error(), s.unknownClass) {
				t.Errorf("unknown agent = %v, want a failure containing %q", err, s.unknownClass)
			}
		})
	}

	// A spent budget refuses every surface before any model is called,
	// the worker's included (it sees the budget within budget.cache_ttl).
	t.Run("budget", func(t *testing.T) {
		c.t = t
		if status, body := c.do("PUT", "/api/budget", map[string]any{"tokens": 1}); status != 200 {
			t.Fatalf("PUT /api/budget: %d %s", status, body)
		}
		time.Sleep(1100 * time.Millisecond) // the worker's budget.cache_ttl
		before := len(fake.Requests())
		for _, s := range surfaces {
			_, err := s.ask(t, "helper", askOK)
			if err == nil || !strings.Contains(err.Error(), "monthly token budget of 1 tokens") {
				t.Errorf("%s over budget = %v; want a refusal naming the monthly token budget", s.name, err)
			}
			if s.unknownClass == "404" && (err == nil || !strings.Contains(err.Error(), "429")) {
				t.Errorf("%s over budget = %v; want HTTP 429", s.name, err)
			}
		}
		if n := len(fake.Requests()) - before; n != 0 {
			t.Errorf("over budget, the provider saw %d requests; want none", n)
		}
		if status, body := c.do("DELETE", "/api/budget", nil); status != 200 {
			t.Errorf("DELETE /api/budget: %d %s", status, body)
		}
	})
	mcpSession.Close()
}

// usageSince returns the workspace's usage rows of surface since, waiting
// (records are written in batches) until want of them are there.
func usageSince(t *testing.T, st store.Store, wsID string, since time.Time, seen map[string]bool, surface string, want int) []store.UsageRecord {
	t.Helper()
	var out, other []store.UsageRecord
	read := func() {
		all, err := st.Usage().List(t.Context(), wsID, since, 1000)
		if err != nil {
			t.Fatal(err)
		}
		out, other = out[:0], other[:0]
		for _, r := range all {
			switch {
			case seen[r.ID]:
			case r.Surface == surface:
				out = append(out, r)
			default:
				other = append(other, r)
			}
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for read(); len(out) < want && time.Now().Before(deadline); read() {
		time.Sleep(50 * time.Millisecond)
	}
	// A moment more, to catch a duplicate row (records are batched).
	time.Sleep(300 * time.Millisecond)
	read()
	for _, r := range append(append([]store.UsageRecord(nil), out...), other...) {
		seen[r.ID] = true
	}
	if len(other) > 0 {
		t.Errorf("usage rows of another surface appeared: %+v", other)
	}
	if len(out) != want {
		t.Errorf("%d usage rows of surface %q, want %d: %+v", len(out), surface, want, out)
	}
	return out
}

func auditSince(t *testing.T, st store.Store, wsID string, since time.Time, seen map[string]bool, action string) []store.AuditEvent {
	t.Helper()
	var out []store.AuditEvent
	for range 50 {
		page, err := st.AuditLog().List(t.Context(), store.AuditFilter{WorkspaceID: wsID, Action: action, Since: since, Limit: 500})
		if err != nil {
			t.Fatal(err)
		}
		out = out[:0]
		for _, e := range page.Events {
			if !seen[e.ID] {
				out = append(out, e)
			}
		}
		if len(out) > 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, e := range out {
		seen[e.ID] = true
	}
	return out
}

type client struct {
	t    *testing.T
	base string
	key  string
}

func (c *client) do(method, path string, body any) (int, []byte) {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequestWithContext(c.t.Context(), method, c.base+path, rd)
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

func (c *client) post(path string, body any) (int, []byte) { return c.do("POST", path, body) }

func httpErr(status int, body []byte) error {
	return fmt.Errorf("%d %s", status, body)
}

func (c *client) v1(agentName, msg string, stream ...bool) (string, error) {
	return c.chatCompletion(agentName, msg, len(stream) > 0 && stream[0])
}

func (c *client) chatCompletion(agentName, msg string, stream bool) (string, error) {
	status, body := c.post("/v1/chat/completions", map[string]any{"model": agentName, "stream": stream,
		"messages": []map[string]string{{"role": "user", "content": msg}}})
	if status != 200 {
		return "", httpErr(status, body)
	}
	if !stream {
		var r struct {
			Choices []struct {
				Message struct {
					Content string `json:"content"`
				} `json:"message"`
			} `json:"choices"`
		}
		if err := json.Unmarshal(body, &r); err != nil || len(r.Choices) != 1 {
			return "", fmt.Errorf("decode %s: %v", body, err)
		}
		return r.Choices[0].Message.Content, nil
	}
	var text strings.Builder
	for _, data := range sseData(body) {
		if data == "[DONE]" {
			continue
		}
		var ch struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
			Error json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal([]byte(data), &ch); err != nil {
			return "", fmt.Errorf("decode chunk %s: %v", data, err)
		}
		if ch.Error != nil {
			return "", fmt.Errorf("in-band error %s", ch.Error)
		}
		for _, c := range ch.Choices {
			text.WriteString(c.Delta.Content)
		}
	}
	return text.String(), nil
}

func (c *client) apiChat(agentName, msg string) (string, error) {
	status, body := c.post("/api/chat", map[string]any{"agent": agentName, "messages": []map[string]string{{"role": "user", "content": msg}}})
	if status != 200 {
		return "", httpErr(status, body)
	}
	var r struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
		ToolCalls []struct {
			Name   string `json:"name"`
			Result string `json:"result"`
		} `json:"tool_calls"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return "", err
	}
	// The chat API shows every server tool call.
	if msg == askOK && (len(r.ToolCalls) != 1 || r.ToolCalls[0].Name != "calculator" || r.ToolCalls[0].Result != "42") {
		return "", fmt.Errorf("tool calls = %+v, want calculator → 42", r.ToolCalls)
	}
	return r.Message.Content, nil
}

func (c *client) apiChatStream(agentName, msg string) (string, error) {
	status, body := c.post("/api/chat/stream", map[string]any{"agent": agentName, "messages": []map[string]string{{"role": "user", "content": msg}}})
	if status != 200 {
		return "", httpErr(status, body)
	}
	var text strings.Builder
	events := sseEvents(body)
	for _, ev := range events {
		switch ev[0] {
		case "text":
			var d struct {
				Text string `json:"text"`
			}
			_ = json.Unmarshal([]byte(ev[1]), &d)
			text.WriteString(d.Text)
		case "error":
			return "", fmt.Errorf("error event %s", ev[1])
		}
	}
	return text.String(), nil
}

func (c *client) mcpSession(id, secret string) *mcp.ClientSession {
	c.t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}}
	req, _ := http.NewRequest("POST", c.base+"/oauth/token", strings.NewReader(form.Encode()))
	req.SetBasicAuth(id, secret)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	if tok.AccessToken == "" {
		c.t.Fatalf("no token (%d)", resp.StatusCode)
	}
	mc := mcp.NewClient(&mcp.Implementation{Name: "conformance", Version: "1"}, nil)
	s, err := mc.Connect(c.t.Context(), &mcp.StreamableClientTransport{Endpoint: c.base + "/mcp",
		HTTPClient: &http.Client{Transport: bearer(tok.AccessToken)}, MaxRetries: -1}, nil)
	if err != nil {
		c.t.Fatalf("mcp connect: %v", err)
	}
	return s
}

type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

func (c *client) mcpAsk(s *mcp.ClientSession, agentName, msg string) (string, error) {
	res, err := s.CallTool(c.t.Context(), &mcp.CallToolParams{Name: "agent_" + agentName, Arguments: map[string]any{"message": msg}})
	if err != nil {
		return "", err
	}
	var text strings.Builder
	for _, ct := range res.Content {
		if tc, ok := ct.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	if res.IsError {
		return "", fmt.Errorf("tool error: %s", text.String())
	}
	return text.String(), nil
}

func (c *client) a2a(agentName, msg string) (string, error) {
	status, body := c.post("/a2a/"+agentName, map[string]any{"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
		"params": map[string]any{"message": map[string]any{"messageId": "m-" + randHex(4), "role": "ROLE_USER", "parts": []map[string]string{{"text": msg}}}}})
	if status != 200 {
		return "", httpErr(status, body)
	}
	var r struct {
		Result struct {
			Task struct {
				Status struct {
					State   string          `json:"state"`
					Message json.RawMessage `json:"message"`
				} `json:"status"`
				Artifacts []struct {
					Parts []struct {
						Text string `json:"text"`
					} `json:"parts"`
				} `json:"artifacts"`
			} `json:"task"`
		} `json:"result"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return "", err
	}
	if r.Error != nil {
		return "", fmt.Errorf("json-rpc error %s", r.Error)
	}
	task := r.Result.Task
	if task.Status.State != "TASK_STATE_COMPLETED" {
		return "", fmt.Errorf("task %s: %s", task.Status.State, task.Status.Message)
	}
	var text strings.Builder
	for _, a := range task.Artifacts {
		for _, p := range a.Parts {
			text.WriteString(p.Text)
		}
	}
	return text.String(), nil
}

// workflow runs a workflow start → agent → end whose agent node names
// agentName; the separate worker process executes it.
func (c *client) workflow(ids map[string]string, agentName, msg string) (string, error) {
	id, ok := ids[agentName]
	if !ok {
		def := map[string]any{"name": "conf-" + agentName, "nodes": []map[string]any{
			{"id": "start", "type": "start"},
			{"id": "ask", "type": "agent", "config": map[string]any{"agent": agentName}},
			{"id": "end", "type": "end"},
		}, "edges": []map[string]any{{"id": "e1", "source": "start", "target": "ask"}, {"id": "e2", "source": "ask", "target": "end"}}}
		status, body := c.post("/api/workflows", def)
		if status != 201 {
			return "", httpErr(status, body)
		}
		var w struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(body, &w)
		id, ids[agentName] = w.ID, w.ID
	}
	status, body := c.post("/api/workflows/"+id+"/runs", map[string]any{"input": msg})
	if status != 202 {
		return "", httpErr(status, body)
	}
	var run struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(body, &run)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		status, body := c.do("GET", "/api/runs/"+run.ID, nil)
		if status != 200 {
			return "", httpErr(status, body)
		}
		var r struct {
			Status string          `json:"status"`
			Output json.RawMessage `json:"output"`
			Error  string          `json:"error"`
		}
		_ = json.Unmarshal(body, &r)
		switch r.Status {
		case "succeeded":
			var s string
			if json.Unmarshal(r.Output, &s) != nil {
				s = string(r.Output)
			}
			return s, nil
		case "failed", "canceled", "failed_contract":
			return "", fmt.Errorf("run %s: %s", r.Status, r.Error)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return "", fmt.Errorf("run %s did not finish", run.ID)
}

// sseData returns the data lines of an SSE body.
func sseData(body []byte) []string {
	var out []string
	for _, ev := range sseEvents(body) {
		out = append(out, ev[1])
	}
	return out
}

// sseEvents returns [event name, data] of each event of an SSE body.
func sseEvents(body []byte) [][2]string {
	var out [][2]string
	var name, data string
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if data != "" {
				out = append(out, [2]string{name, data})
			}
			name, data = "", ""
		case strings.HasPrefix(line, "event:"):
			name = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			data += strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " ")
		}
	}
	if data != "" {
		out = append(out, [2]string{name, data})
	}
	return out
}

func field(out, name string) string {
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, name+": "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func randHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// binDir holds the binary the package's tests share (TestMain removes it).
var (
	binDir   string
	binOnce  sync.Once
	binPath  string
	binError error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// buildBinary builds agentcraft once for the package's tests.
func buildBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binError = os.MkdirTemp("", "agentcraft-surfaces-")
		if binError != nil {
			return
		}
		binPath = filepath.Join(binDir, "agentcraft")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/agentcraftlab/agentcraft/cmd/agentcraft").CombinedOutput()
		if err != nil {
			binError = fmt.Errorf("build: %v\n%s", err, out)
		}
	})
	if binError != nil {
		t.Fatal(binError)
	}
	return binPath
}

// freshDatabase creates a database of its own for the test and returns
// its URL; it is dropped at the end.
func freshDatabase(t *testing.T, dsn string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	name := "surfaces_" + randHex(6)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Errorf("drop database: %v", err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database: %v", err)
		}
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startProcess starts the binary; its output goes to the test log when
// the test fails. It is stopped (SIGTERM, then killed) at cleanup.
func startProcess(t *testing.T, bin string, env []string, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env, cmd.Dir = env, dir
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("%s output:\n%s", args[0], out.String())
		}
	})
}

func runCLI(t *testing.T, bin string, env []string, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env, cmd.Dir = env, dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("agentcraft %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

func waitHealthy(t *testing.T, base string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(base + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("serve did not become healthy")
}

type syncBuffer struct {
	mu sync.Mutex // guards b
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
