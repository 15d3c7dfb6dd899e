package a2a_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentcraftlab/agentcraft/a2a"
	"github.com/agentcraftlab/agentcraft/internal/tracing"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
)

// TestClientCarriesTraceparent: a message sent to a remote agent carries
// the W3C traceparent of the caller's trace, with a bearer token or
// without, so the agent called continues the run's trace.
func TestClientCarriesTraceparent(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	uninstall := tracing.Install(tp, false)
	defer uninstall()

	s, err := a2a.NewServer(&a2a.ServerOptions{Agents: testAgents{"helper": fakeAgent(t, llmtest.Turn{Text: "one"}, llmtest.Turn{Text: "two"})}})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex // guards seen
		seen []string
	)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			mu.Lock()
			seen = append(seen, r.Header.Get("Traceparent"))
			mu.Unlock()
		}
		s.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { hs.Close(); s.Stop() })

	for _, opts := range []*a2a.ClientOptions{nil, {Token: "tok"}} {
		mu.Lock()
		seen = nil
		mu.Unlock()
		ctx, span := tracing.Start(context.Background(), "execute_tool helper", trace.SpanKindInternal)
		c, err := a2a.NewClient(ctx, hs.URL+"/a2a/helper", opts)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.SendText(ctx, "hi"); err != nil {
			t.Fatal(err)
		}
		span.End()
		want := span.SpanContext().TraceID().String()
		mu.Lock()
		got := append([]string(nil), seen...)
		mu.Unlock()
		if len(got) == 0 || !strings.Contains(got[len(got)-1], "-"+want+"-") {
			t.Errorf("token %v: the agent received traceparents %q, want one of trace %s", opts != nil, got, want)
		}
	}
}
