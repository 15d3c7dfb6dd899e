package metrics

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/llm/openai"
)

// values gathers m's registry as "name{k="v",...}" → value; a histogram
// gives its _count and _sum.
func values(t *testing.T, m *Metrics) map[string]float64 {
	t.Helper()
	fams, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range fams {
		for _, mt := range f.Metric {
			var labels []string
			for _, l := range mt.Label {
				labels = append(labels, l.GetName()+"="+`"`+l.GetValue()+`"`)
			}
			sort.Strings(labels)
			key := "{" + strings.Join(labels, ",") + "}"
			switch {
			case mt.Counter != nil:
				out[f.GetName()+key] = mt.Counter.GetValue()
			case mt.Gauge != nil:
				out[f.GetName()+key] = mt.Gauge.GetValue()
			case mt.Histogram != nil:
				out[f.GetName()+"_count"+key] = float64(mt.Histogram.GetSampleCount())
				out[f.GetName()+"_sum"+key] = mt.Histogram.GetSampleSum()
			}
		}
	}
	return out
}

// exposition is what GET /metrics answers, in the text format.
func exposition(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/metrics", nil)
	req.Header.Set("Accept", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	m.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics = %d %s", rec.Code, rec.Body)
	}
	return rec.Body.String()
}

// TestHTTPRoutePatternLabels: requests are labelled by the pattern that
// served them (the innermost mux's, as the server nests /v1 and /api in
// one), never their path; what no pattern serves, or a catch-all answers
// 404, is "unmatched"; streamed answers keep working through the wrapper.
func TestHTTPRoutePatternLabels(t *testing.T) {
	t.Parallel()
	m := New(&Options{NoRuntime: true})
	api := http.NewServeMux()
	api.HandleFunc("GET /api/runs/{id}", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("run")) })
	api.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte("data: 1\n\n"))
		if err := http.NewResponseController(w).Flush(); err != nil {
			t.Errorf("flush through the metrics writer: %v", err)
		}
		w.(http.Flusher).Flush()
	})
	api.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no route", http.StatusNotFound) })
	root := http.NewServeMux()
	root.Handle("/api/", api)
	root.Handle("/v1/", api)
	root.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	srv := httptest.NewServer(m.HTTP(root))
	defer srv.Close()

	for _, rq := range []struct{ method, path string }{
		{"GET", "/api/runs/run_8f14e45fceea167a"},
		{"GET", "/api/runs/run_c9f0f895fb98ab91"},
		{"POST", "/v1/chat/completions"},
		{"GET", "/health"},
		{"POST", "/health"},              // 405: no pattern
		{"GET", "/api/nothing/ws_12345"}, // the catch-all's 404
		{"GET", "/elsewhere/key_abc"},    // the root mux's own 404
	} {
		req, _ := http.NewRequest(rq.method, srv.URL+rq.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	got := values(t, m)
	want := map[string]float64{
		`agentcraft_http_requests_total{code="200",route="GET /api/runs/{id}"}`:        2,
		`agentcraft_http_requests_total{code="200",route="POST /v1/chat/completions"}`: 1,
		`agentcraft_http_requests_total{code="418",route="GET /health"}`:               1,
		`agentcraft_http_requests_total{code="405",route="unmatched"}`:                 1,
		`agentcraft_http_requests_total{code="404",route="unmatched"}`:                 2,
		`agentcraft_http_request_duration_seconds_count{route="GET /api/runs/{id}"}`:   2,
		`agentcraft_http_request_duration_seconds_count{route="unmatched"}`:            3,
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s = %v, want %v", k, got[k], w)
		}
	}
	var httpSeries []string
	for k := range got {
		if strings.HasPrefix(k, "agentcraft_http_requests_total") {
			httpSeries = append(httpSeries, k)
		}
	}
	if len(httpSeries) != 5 {
		t.Errorf("HTTP series = %v, want the 5 above", httpSeries)
	}
}

// TestLabelsAreBounded: ids in paths, model-invented tool names and
// malformed strings never become label values; many distinct ids leave
// the series count where one left it.
func TestLabelsAreBounded(t *testing.T) {
	t.Parallel()
	m := New(&Options{NoRuntime: true})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/runs/{id}", func(w http.ResponseWriter, r *http.Request) {})
	h := m.HTTP(mux)
	count := func() int {
		n := 0
		for k := range values(t, m) {
			if !strings.HasPrefix(k, "promhttp_") {
				n++
			}
		}
		return n
	}
	ids := []string{"run_0001deadbeef", "ws_77aa", "key_secret123", "usr_42"}
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/api/runs/"+ids[0], nil))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/unknown/"+ids[1], nil))
	m.ToolCall("unknown", "unknown_tool", time.Millisecond)
	m.WorkflowNode("agent", "succeeded", time.Millisecond)
	before := count()
	for i := range 200 {
		id := ids[i%len(ids)] + strings.Repeat("x", i%7)
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/api/runs/"+id, nil))
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/unknown/"+id, nil))
		m.ToolCall("unknown", "unknown_tool", time.Millisecond)
		m.WorkflowNode("agent", "succeeded", time.Millisecond)
	}
	if after := count(); after != before {
		t.Errorf("series grew from %d to %d with distinct ids", before, after)
	}
	// Strings the client library would panic on are mended, and long
	// ones cut at a character boundary.
	m.ToolCall("bad\xff\xfename", "ok", 0)
	m.WorkflowNode(strings.Repeat("é", 200), "", -1)
	text := exposition(t, m)
	for _, id := range ids {
		if strings.Contains(text, id) {
			t.Errorf("the exposition holds the id %q", id)
		}
	}
	if !strings.Contains(text, `status="none"`) {
		t.Error(`an empty status is not labelled "none"`)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	if _, err := parser.TextToMetricFamilies(strings.NewReader(text)); err != nil {
		t.Errorf("exposition does not parse: %v", err)
	}
}

// TestModelCountsEachRequest: the model layer over a real adapter counts
// each request with the tokens the provider reported (streamed or not)
// and each failure by its kind.
func TestModelCountsEachRequest(t *testing.T) {
	t.Parallel()
	fake := llmtest.NewOpenAI(t,
		llmtest.Turn{Text: "one", Usage: llm.Usage{InputTokens: 100, OutputTokens: 10, CachedTokens: 40}},
		llmtest.Turn{Text: "two", Usage: llm.Usage{InputTokens: 50, OutputTokens: 5}},
		llmtest.Turn{Fault: &llmtest.Fault{Status: http.StatusTooManyRequests, RetryAfter: "1"}},
		llmtest.Turn{Fault: &llmtest.Fault{Status: http.StatusInternalServerError}},
	)
	adapter, err := openai.New(&openai.Options{BaseURL: fake.URL + "/v1", APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	m := New(&Options{NoRuntime: true})
	model := m.Model(adapter, "fake", "gpt-test", "helper")
	req := llm.Request{Model: "gpt-test", Messages: []llm.Message{llm.Text(llm.RoleUser, "hi")}}
	ctx := context.Background()
	if _, err := model.Generate(ctx, req); err != nil {
		t.Fatal(err)
	}
	for _, err := range model.Stream(ctx, req) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := model.Generate(ctx, req); llm.KindOf(err) != llm.KindRateLimit {
		t.Fatalf("429 gave %v", err)
	}
	var streamErr error
	for _, err := range model.Stream(ctx, req) {
		streamErr = errors.Join(streamErr, err)
	}
	if llm.KindOf(streamErr) != llm.KindProvider {
		t.Fatalf("500 gave %v", streamErr)
	}
	lv := `agent="helper",model="gpt-test",provider="fake"`
	got := values(t, m)
	want := map[string]float64{
		`agentcraft_llm_requests_total{` + lv + `}`:                                                      4,
		`agentcraft_llm_request_duration_seconds_count{` + lv + `}`:                                      4,
		`agentcraft_llm_tokens_total{` + lv + `,type="input"}`:                                           150,
		`agentcraft_llm_tokens_total{` + lv + `,type="output"}`:                                          15,
		`agentcraft_llm_tokens_total{` + lv + `,type="cached"}`:                                          40,
		`agentcraft_llm_errors_total{agent="helper",kind="rate_limit",model="gpt-test",provider="fake"}`: 1,
		`agentcraft_llm_errors_total{agent="helper",kind="provider",model="gpt-test",provider="fake"}`:   1,
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s = %v, want %v", k, got[k], w)
		}
	}
}

// TestNilMetricsRecordNothing: the seams call a nil *Metrics freely.
func TestNilMetricsRecordNothing(t *testing.T) {
	var m *Metrics
	h := http.NotFoundHandler()
	if got := m.HTTP(h); got == nil {
		t.Fatal("nil HTTP returned nil")
	}
	m.ToolCall("t", "ok", 0)
	m.WorkflowRun("succeeded", 0)
	m.WorkflowNode("agent", "failed", 0)
	if err := m.WatchDatabase(nil, nil); err != nil {
		t.Fatal(err)
	}
}

// TestRuntimeCollectors: a default registry has the Go and process
// collectors, and two registries live side by side.
func TestRuntimeCollectors(t *testing.T) {
	t.Parallel()
	a, b := New(nil), New(nil)
	a.ToolCall("calculator", "ok", time.Millisecond)
	text := exposition(t, a)
	for _, name := range []string{"go_goroutines", "go_memstats_heap_alloc_bytes", "process_resident_memory_bytes", "agentcraft_tool_calls_total"} {
		if !strings.Contains(text, "\n"+name) && !strings.HasPrefix(text, name) {
			t.Errorf("exposition lacks %s", name)
		}
	}
	if strings.Contains(exposition(t, b), `tool="calculator"`) {
		t.Error("registries share series")
	}
}
