package tracing

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// record installs an in-memory recorder as the provider for the test (no
// exporter: what the seams make, not how it is sent) and returns it.
func record(t *testing.T) *tracetest.SpanRecorder {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	uninstall := Install(tp, false)
	t.Cleanup(func() {
		uninstall()
		_ = tp.Shutdown(context.Background())
	})
	return rec
}

func attrOf(s sdktrace.ReadOnlySpan, key attribute.Key) attribute.Value {
	for _, kv := range s.Attributes() {
		if kv.Key == key {
			return kv.Value
		}
	}
	return attribute.Value{}
}

func TestTracesURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:4318":             "http://127.0.0.1:4318/v1/traces",
		"http://127.0.0.1:4318/":            "http://127.0.0.1:4318/v1/traces",
		"https://otel.example.com/otlp":     "https://otel.example.com/otlp/v1/traces",
		"http://tempo:4318/v1/traces":       "http://tempo:4318/v1/traces",
		"https://c.example.com/x/v1/traces": "https://c.example.com/x/v1/traces",
	} {
		if got, err := TracesURL(in); err != nil || got != want {
			t.Errorf("TracesURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "127.0.0.1:4318", "grpc://c:4317", "http://"} {
		if _, err := TracesURL(in); err == nil {
			t.Errorf("TracesURL(%q) accepted", in)
		}
	}
	if _, err := Setup(context.Background(), Config{Endpoint: "http://c:4318", SampleRatio: 2}); err == nil || !strings.Contains(err.Error(), "sample ratio") {
		t.Errorf("Setup with ratio 2: %v", err)
	}
}

func TestOffRecordsNothing(t *testing.T) {
	if Enabled() {
		t.Fatal("tracing is on before Setup")
	}
	ctx, span := Start(context.Background(), "x", trace.SpanKindInternal)
	if span.IsRecording() || trace.SpanContextFromContext(ctx).IsValid() {
		t.Fatal("Start records while tracing is off")
	}
	var got *http.Request
	rt := Transport(roundTripper(func(r *http.Request) (*http.Response, error) {
		got = r
		return &http.Response{StatusCode: 200, Body: http.NoBody}, nil
	}))
	req := httptest.NewRequest("GET", "http://example.com/", nil)
	if _, err := rt.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	if got != req || got.Header.Get("Traceparent") != "" {
		t.Error("Transport changed the request while tracing is off")
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestHandlerNamesByRouteAndContinuesTrace: the server span is named by
// the pattern of the inner mux that served the request, carries the
// status, continues an incoming traceparent, and streaming still flushes.
func TestHandlerNamesByRouteAndContinuesTrace(t *testing.T) {
	rec := record(t)
	inner := http.NewServeMux()
	inner.HandleFunc("GET /api/runs/{id}", func(w http.ResponseWriter, r *http.Request) {
		if !trace.SpanContextFromContext(r.Context()).IsValid() {
			t.Error("the handler's context has no span")
		}
		w.WriteHeader(http.StatusTeapot)
		http.NewResponseController(w).Flush() // must reach the real writer
	})
	outer := http.NewServeMux()
	outer.Handle("/api/", inner)
	srv := httptest.NewServer(Handler(outer))
	defer srv.Close()

	req, _ := http.NewRequest("GET", srv.URL+"/api/runs/run_123", nil)
	req.Header.Set("Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTeapot {
		t.Fatalf("status %d", resp.StatusCode)
	}
	// The span ends when the handler returns, which can be after the
	// client has read the flushed answer: Close waits for the handler.
	srv.Close()
	spans := rec.Ended()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1", len(spans))
	}
	s := spans[0]
	if s.Name() != "GET /api/runs/{id}" || s.SpanKind() != trace.SpanKindServer {
		t.Errorf("span %q kind %v, want server span GET /api/runs/{id}", s.Name(), s.SpanKind())
	}
	if got := attrOf(s, "http.route").AsString(); got != "/api/runs/{id}" {
		t.Errorf("http.route = %q", got)
	}
	if got := attrOf(s, "http.response.status_code").AsInt64(); got != http.StatusTeapot {
		t.Errorf("http.response.status_code = %d", got)
	}
	if s.SpanContext().TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || s.Parent().SpanID().String() != "00f067aa0ba902b7" {
		t.Errorf("span is in trace %s under %s, want the caller's", s.SpanContext().TraceID(), s.Parent().SpanID())
	}
}

// TestTransportInjectsOnceWithOneClientSpan: a chain of two Transports
// (an A2A client's header transport over the egress client's) sends one
// traceparent naming the one client span, a child of the caller's span.
func TestTransportInjectsOnceWithOneClientSpan(t *testing.T) {
	rec := record(t)
	var seen []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Values("Traceparent")...)
		mu.Unlock()
		w.WriteHeader(http.StatusNotFound)
	}))
	defer srv.Close()
	inner := Transport(nil)
	if Transport(inner) != inner {
		t.Error("wrapping a Transport again made a second layer")
	}
	outer := Transport(roundTripper(func(r *http.Request) (*http.Response, error) { return inner.RoundTrip(r) }))
	c := &http.Client{Transport: outer}

	// Without a span in the context: no header, no span.
	resp, err := c.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	ctx, parent := Start(context.Background(), "execute_tool x", trace.SpanKindInternal)
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/items?key=secret", nil)
	resp, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	parent.End()
	if req.Header.Get("Traceparent") != "" {
		t.Error("the caller's request was changed")
	}

	if len(seen) != 1 {
		t.Fatalf("server saw traceparents %v, want exactly one", seen)
	}
	var client sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.SpanKind() == trace.SpanKindClient {
			if client != nil {
				t.Fatal("two client spans for one request")
			}
			client = s
		}
	}
	if client == nil || client.Name() != "GET" || client.Parent().SpanID() != parent.SpanContext().SpanID() {
		t.Fatalf("client span = %v, want GET under the caller's span", client)
	}
	if want := "00-" + client.SpanContext().TraceID().String() + "-" + client.SpanContext().SpanID().String() + "-01"; seen[0] != want {
		t.Errorf("traceparent %q, want %q (the client span)", seen[0], want)
	}
	if got := attrOf(client, "http.response.status_code").AsInt64(); got != 404 || attrOf(client, "error.type").AsString() != "404" {
		t.Errorf("client span status %d error.type %q", got, attrOf(client, "error.type").AsString())
	}
	for _, kv := range client.Attributes() {
		if strings.Contains(kv.Value.Emit(), "secret") {
			t.Errorf("client span attribute %s = %q carries the query string", kv.Key, kv.Value.Emit())
		}
	}
}

func TestLogHandlerAddsTraceIDs(t *testing.T) {
	record(t)
	var buf bytes.Buffer
	logger := slog.New(LogHandler(slog.NewTextHandler(&buf, nil))).With("component", "test")
	ctx, span := Start(context.Background(), "x", trace.SpanKindInternal)
	defer span.End()
	logger.InfoContext(ctx, "with_span")
	logger.Info("without_span")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	sc := span.SpanContext()
	if len(lines) != 2 || !strings.Contains(lines[0], "trace_id="+sc.TraceID().String()) || !strings.Contains(lines[0], "span_id="+sc.SpanID().String()) {
		t.Errorf("line with a span = %q, want trace_id and span_id", lines[0])
	}
	if len(lines) == 2 && strings.Contains(lines[1], "trace_id") {
		t.Errorf("line without a span = %q has a trace_id", lines[1])
	}
}

// BenchmarkStartEnd is the cost of one span at a seam: off (tracing not
// set up: one atomic load, no allocation) and on (the SDK recording a
// span with three attributes, exported to nowhere).
func BenchmarkStartEnd(b *testing.B) {
	ctx := context.Background()
	seam := func() {
		if !Enabled() {
			return
		}
		_, span := Start(ctx, "chat gpt-4o", trace.SpanKindClient,
			GenAIOperationName.String(OpChat), GenAIProviderName.String("openai"), GenAIRequestModel.String("gpt-4o"))
		span.SetAttributes(GenAIUsageInputTokens.Int(11), GenAIUsageOutputTokens.Int(7))
		span.End()
	}
	b.Run("off", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			seam()
		}
	})
	b.Run("off-start", func(b *testing.B) {
		// Start itself while off, for a seam that calls it unguarded.
		b.ReportAllocs()
		for b.Loop() {
			_, span := Start(ctx, "chat", trace.SpanKindClient)
			span.End()
		}
	})
	b.Run("off-carry", func(b *testing.B) {
		// What starting a queued run adds while off (Carry).
		b.ReportAllocs()
		for b.Loop() {
			_, _ = Carry(ctx)
		}
	})
	b.Run("on", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discard{}))
		s := &state{tracer: tp.Tracer(InstrumentationName)}
		current.Store(s)
		defer func() {
			current.CompareAndSwap(s, nil)
			_ = tp.Shutdown(context.Background())
		}()
		b.ReportAllocs()
		for b.Loop() {
			seam()
		}
	})
	b.Run("log-plain", func(b *testing.B) {
		// The peer of log-handler: the same record without the wrapper.
		logger := slog.New(slog.NewTextHandler(io.Discard, nil))
		b.ReportAllocs()
		for b.Loop() {
			logger.InfoContext(ctx, "llm request finished", "model", "m")
		}
	})
	b.Run("log-handler", func(b *testing.B) {
		logger := slog.New(LogHandler(slog.NewTextHandler(io.Discard, nil)))
		b.ReportAllocs()
		for b.Loop() {
			logger.InfoContext(ctx, "llm request finished", "model", "m")
		}
	})
}

// discard is an exporter that drops every span.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }
