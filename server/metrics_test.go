package server_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/internal/metrics"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/server/servertest"
)

// TestMetricsLabelRoutesByPattern: the server counts each request under
// the route pattern that served it — answered, refused by the
// authenticator or by the handler — and unknown paths as unmatched; the
// model layer counts the tokens the provider reported; no path, key,
// agent id or workspace id reaches the exposition.
func TestMetricsLabelRoutesByPattern(t *testing.T) {
	fake := llmtest.NewOpenAI(t, llmtest.Turn{Text: "Hi.", Usage: llm.Usage{InputTokens: 12, OutputTokens: 5, CachedTokens: 2}})
	m := metrics.New(&metrics.Options{NoRuntime: true})
	env := servertest.New(t, &servertest.Options{
		Providers: []platform.ProviderConfig{{Name: "fake", Type: "openai", BaseURL: fake.URL + "/v1", APIKey: "upstream-secret"}},
		Agents:    []platform.AgentSpec{{Name: "helper", Model: "fake/fake-model"}},
		Metrics:   m,
	})
	c := client{t: t, base: env.URL, key: env.Key}
	for _, rq := range []struct {
		method, path, body string
		key                string
		status             int
	}{
		{"POST", "/v1/chat/completions", `{"model":"helper","messages":[{"role":"user","content":"hi"}]}`, env.Key, 200},
		{"GET", "/api/agents/helper", "", env.Key, 200},
		{"GET", "/api/agents/agent_5e1f0c9d", "", env.Key, 404},
		{"GET", "/api/agents", "", "", 401},
		{"GET", "/v1/nothing/run_9a8b7c6d", "", env.Key, 404},
		{"GET", "/health", "", "", 200},
	} {
		c.key = rq.key
		if resp, body := c.do(rq.method, rq.path, rq.body); resp.StatusCode != rq.status {
			t.Fatalf("%s %s = %d %s, want %d", rq.method, rq.path, resp.StatusCode, body, rq.status)
		}
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	text := rec.Body.String()
	for _, line := range []string{
		`agentcraft_http_requests_total{code="200",route="POST /v1/chat/completions"} 1`,
		`agentcraft_http_requests_total{code="200",route="GET /api/agents/{id}"} 1`,
		`agentcraft_http_requests_total{code="404",route="GET /api/agents/{id}"} 1`,
		`agentcraft_http_requests_total{code="401",route="GET /api/agents"} 1`,
		`agentcraft_http_requests_total{code="404",route="unmatched"} 1`,
		`agentcraft_http_requests_total{code="200",route="GET /health"} 1`,
		`agentcraft_llm_requests_total{agent="helper",model="fake-model",provider="fake"} 1`,
		`agentcraft_llm_tokens_total{agent="helper",model="fake-model",provider="fake",type="input"} 12`,
		`agentcraft_llm_tokens_total{agent="helper",model="fake-model",provider="fake",type="output"} 5`,
		`agentcraft_llm_tokens_total{agent="helper",model="fake-model",provider="fake",type="cached"} 2`,
	} {
		if !strings.Contains(text, "\n"+line+"\n") {
			t.Errorf("exposition lacks %s", line)
		}
	}
	for _, secret := range []string{"agent_5e1f0c9d", "run_9a8b7c6d", env.Key, env.Workspace.ID, "upstream-secret"} {
		if strings.Contains(text, secret) {
			t.Errorf("exposition holds %q", secret)
		}
	}
	if t.Failed() {
		t.Logf("exposition:\n%s", text)
	}
}
