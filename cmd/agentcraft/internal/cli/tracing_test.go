package cli

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/agentcraftlab/agentcraft/internal/tracing"
)

// TestServeExportsTracesAndFlushesOnExit: with tracing.endpoint set, serve
// exports the span of a request to the OTLP/HTTP receiver by the time it
// has stopped — the span is still in the batch (5 s) when it stops, so
// only the flush on exit sends it — with the configured service name and
// the binary's version, and turns tracing off again.
func TestServeExportsTracesAndFlushesOnExit(t *testing.T) {
	t.Chdir(t.TempDir())
	var (
		mu    sync.Mutex // guards names and attrs
		names []string
		res   []string
	)
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req collectortrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			t.Errorf("export: %v", err)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for _, rs := range req.ResourceSpans {
			for _, kv := range rs.GetResource().GetAttributes() {
				res = append(res, kv.Key+"="+kv.Value.GetStringValue())
			}
			for _, ss := range rs.ScopeSpans {
				for _, sp := range ss.Spans {
					names = append(names, sp.Name)
				}
			}
		}
	}))
	defer rc.Close()
	cfg := serveConfig(t, "AGENTCRAFT_TRACING_ENDPOINT="+rc.URL, "AGENTCRAFT_TRACING_SERVICE_NAME=ac-test")
	cfg.Server.ShutdownTimeout = 10 * time.Second
	addr, logs, stop := serveWith(t, cfg)
	resp, err := http.Get("http://" + addr + "/health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(strings.Join(names, ","), "GET /health") {
		t.Errorf("exported spans %v, want GET /health\n%s", names, logs.String())
	}
	got := strings.Join(res, ",")
	if !strings.Contains(got, "service.name=ac-test") || !strings.Contains(got, "service.version="+version()) {
		t.Errorf("resource %s, want service.name=ac-test and service.version=%s", got, version())
	}
	if tracing.Enabled() {
		t.Error("tracing is still on after serve returned")
	}
	if !strings.Contains(logs.String(), "tracing_on") {
		t.Errorf("serve did not log tracing_on:\n%s", logs.String())
	}
}
