package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/cmd/agentcraft/internal/config"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
)

// prometheusBinary is Debian's prometheus package's server; promtool
// comes with it. The CI script installs the package.
func prometheusBinary(t *testing.T, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	p := "/usr/bin/" + name
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s is not installed (apt-get install -y prometheus): the Prometheus acceptance test needs the real server", name)
	}
	return p
}

// freePort returns a loopback address nothing listens on right now.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// startServeWith runs serve with cfg until the test ends; it returns the
// base URL and the log.
func startServeWith(t *testing.T, cfg config.Config) (string, *bytes.Buffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	logs := &bytes.Buffer{}
	go func() { done <- serve(ctx, cfg, newLogger(&syncWriter{w: logs}, cfg.Log), ready) }()
	select {
	case addr := <-ready:
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("serve: %v", err)
			}
		})
		return "http://" + addr, logs
	case err := <-done:
		cancel()
		t.Fatalf("serve ended: %v\n%s", err, logs.String())
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatal("server did not start")
	}
	return "", nil
}

const testMetricsToken = "metrics-token-for-the-test-0123"

// TestMetricsScrapedByPrometheus is the acceptance test of the metrics:
// `agentcraft serve` with an llmtest provider answers known traffic, the
// real Prometheus scrapes it (the main port's /metrics behind the token,
// and the listener of metrics.listen), and PromQL over Prometheus' HTTP
// API sees the request counts and token sums the traffic made; promtool
// finds nothing to complain about in the exposition.
func TestMetricsScrapedByPrometheus(t *testing.T) {
	promBin := prometheusBinary(t, "prometheus")
	promtool := prometheusBinary(t, "promtool")
	t.Chdir(t.TempDir())

	const chats = 5
	usage := llm.Usage{InputTokens: 11, OutputTokens: 7, CachedTokens: 3}
	fake := llmtest.NewOpenAI(t)
	for range chats {
		fake.Push(llmtest.Turn{Text: "Hello there.", Usage: usage})
	}
	// One more chat whose model calls the calculator once, then answers.
	toolUsage := llm.Usage{InputTokens: 20, OutputTokens: 4}
	fake.Push(llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "calculator", Arguments: `{"expression":"6*7"}`}}, Usage: toolUsage},
		llmtest.Turn{Text: "42.", Usage: toolUsage})

	cfg, err := config.Load("", []string{})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Server.Addr = "127.0.0.1:0"
	cfg.Server.Auth = "none"
	f := false
	cfg.DetectProviders = &f
	cfg.Providers = []config.Provider{{Name: "fake", Type: "openai", BaseURL: fake.URL + "/v1", APIKey: "upstream-secret"}}
	cfg.Agents = []config.Agent{{Name: "helper", Model: "fake/fake-model", Instructions: "Help.", Tools: []string{"calculator"}}}
	listen := freePort(t)
	cfg.Metrics = config.Metrics{Listen: listen, Token: testMetricsToken}
	base, logs := startServeWith(t, cfg)

	// Known traffic: chats through /v1 (streamed and not), one with a
	// tool call, and some /api reads.
	for i := range chats {
		body := fmt.Sprintf(`{"model":"helper","stream":%t,"messages":[{"role":"user","content":"hi %d"}]}`, i%2 == 0, i)
		status, out := httpDo(t, "POST", base+"/v1/chat/completions", "", body)
		if status != http.StatusOK {
			t.Fatalf("chat %d = %d %s\n%s", i, status, out, logs)
		}
	}
	status, out := httpDo(t, "POST", base+"/v1/chat/completions", "", `{"model":"helper","messages":[{"role":"user","content":"6*7?"}]}`)
	if status != http.StatusOK || !strings.Contains(out, "42") {
		t.Fatalf("tool chat = %d %s", status, out)
	}
	const apiReads = 3
	for range apiReads {
		if status, out := httpDo(t, "GET", base+"/api/agents", "", ""); status != http.StatusOK {
			t.Fatalf("GET /api/agents = %d %s", status, out)
		}
	}
	// A path no route has, with an id in it: its label is never the path.
	httpDo(t, "GET", base+"/v1/runs-7f3c9e2a/nothing", "", "")

	// The main port's /metrics needs the token.
	if status, _ := httpDo(t, "GET", base+"/metrics", "", ""); status != http.StatusUnauthorized {
		t.Errorf("GET /metrics without the token = %d, want 401", status)
	}
	if status, _ := httpDo(t, "GET", base+"/metrics", "wrong-token-wrong-token", ""); status != http.StatusUnauthorized {
		t.Errorf("GET /metrics with a wrong token = %d, want 401", status)
	}

	// promtool lints the exposition as Prometheus' text format.
	status, exposition := httpDo(t, "GET", "http://"+listen+"/metrics", testMetricsToken, "")
	if status != http.StatusOK {
		t.Fatalf("GET metrics.listen /metrics = %d %s", status, exposition)
	}
	check := exec.Command(promtool, "check", "metrics")
	check.Stdin = strings.NewReader(exposition)
	if out, err := check.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
	if strings.Contains(exposition, "runs-7f3c9e2a") {
		t.Error("the exposition holds a request path's id")
	}

	// The real Prometheus scrapes both endpoints every second.
	dir := t.TempDir()
	mainHost := strings.TrimPrefix(base, "http://")
	promCfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: agentcraft
    authorization: {type: Bearer, credentials: %q}
    static_configs: [{targets: [%q]}]
  - job_name: agentcraft_listener
    authorization: {type: Bearer, credentials: %q}
    static_configs: [{targets: [%q]}]
`, testMetricsToken, mainHost, testMetricsToken, listen)
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(promCfg), 0o600); err != nil {
		t.Fatal(err)
	}
	promAddr := freePort(t)
	var promLog bytes.Buffer
	cmd := exec.Command(promBin, "--config.file="+cfgPath, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+promAddr, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = &promLog, &promLog
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("prometheus log:\n%s", promLog.String())
		}
	})

	want := map[string]float64{
		`up{job="agentcraft"}`:          1,
		`up{job="agentcraft_listener"}`: 1,
		`sum(agentcraft_http_requests_total{job="agentcraft",route="POST /v1/chat/completions",code="200"})`:          chats + 1,
		`sum(agentcraft_http_requests_total{job="agentcraft",route="GET /api/agents",code="200"})`:                    apiReads,
		`sum(agentcraft_http_requests_total{job="agentcraft",route="unmatched",code="404"})`:                          1,
		`sum(agentcraft_llm_requests_total{job="agentcraft",provider="fake",model="fake-model",agent="helper"})`:      chats + 2,
		`sum(agentcraft_llm_tokens_total{job="agentcraft",agent="helper",type="input"})`:                              chats*11 + 2*20,
		`sum(agentcraft_llm_tokens_total{job="agentcraft",agent="helper",type="output"})`:                             chats*7 + 2*4,
		`sum(agentcraft_llm_tokens_total{job="agentcraft",agent="helper",type="cached"})`:                             chats * 3,
		`sum(agentcraft_llm_request_duration_seconds_count{job="agentcraft",agent="helper"})`:                         chats + 2,
		`sum(agentcraft_tool_calls_total{job="agentcraft",tool="calculator",outcome="ok"})`:                           1,
		`sum(agentcraft_http_requests_total{job="agentcraft_listener",route="POST /v1/chat/completions",code="200"})`: chats + 1,
		`agentcraft_database_up{job="agentcraft"}`:                                                                    1,
		`agentcraft_approvals_pending{job="agentcraft"}`:                                                              0,
		`count(agentcraft_http_requests_total{job="agentcraft"})`:                                                     5,
	}
	// The last one counts the HTTP series: the chat route, /api/agents,
	// unmatched, and GET /metrics answered 401 (above) and 200
	// (Prometheus' scrapes), and no more.
	deadline := time.Now().Add(120 * time.Second)
	for {
		got := map[string]float64{}
		for q := range want {
			if v, ok := promQuery(t, promAddr, q); ok {
				got[q] = v
			}
		}
		missing := []string{}
		for q, w := range want {
			if g, ok := got[q]; !ok || g != w {
				missing = append(missing, fmt.Sprintf("%s = %v (present %v), want %v", q, g, ok, w))
			}
		}
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Prometheus did not see the traffic:\n%s", strings.Join(missing, "\n"))
		}
		time.Sleep(500 * time.Millisecond)
	}
	if v, ok := promQuery(t, promAddr, `agentcraft_database_size_bytes{job="agentcraft"}`); !ok || v <= 0 {
		t.Errorf("agentcraft_database_size_bytes = %v (present %v), want > 0", v, ok)
	}
}

// httpDo sends a request (with a bearer token when set) and returns the
// status and body.
func httpDo(t *testing.T, method, u, token, body string) (int, string) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, u, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// promQuery evaluates an instant PromQL query through Prometheus' HTTP
// API and returns the value of its single sample; false when the answer
// has no sample (not scraped yet) or Prometheus is not up yet.
func promQuery(t *testing.T, addr, q string) (float64, bool) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	var out struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return 0, false
	}
	if out.Status != "success" {
		if resp.StatusCode == http.StatusBadRequest {
			t.Fatalf("query %s: %s", q, out.Error)
		}
		return 0, false
	}
	if len(out.Data.Result) != 1 {
		return 0, false
	}
	s, _ := out.Data.Result[0].Value[1].(string)
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil
}
