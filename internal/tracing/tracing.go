// Package tracing is AgentCraft's OpenTelemetry tracing: Setup builds the
// process's TracerProvider (an OTLP/HTTP protobuf exporter behind a batch
// processor, a resource naming the service and its version, a parent-based
// ratio sampler) and Shutdown flushes it; Start opens a span at one of the
// platform's seams (an HTTP request, a workflow run or node, an agent run,
// a model or tool call). Handler continues an incoming W3C traceparent,
// Transport injects one into outbound requests, and LogHandler adds the
// trace_id and span_id of a record's context to every log line.
//
// Tracing is off until Setup is called, and off it costs next to nothing:
// Enabled is one atomic load, and every seam checks it before it builds a
// span name or an attribute (BenchmarkStartEnd).
//
//	p, err := tracing.Setup(ctx, tracing.Config{Endpoint: "http://127.0.0.1:4318", SampleRatio: 1})
//	defer p.Shutdown(context.Background())
//	ctx, span := tracing.Start(ctx, "chat gpt-4o", trace.SpanKindClient)
//	defer span.End()
//
// The provider is process-wide, as OpenTelemetry's global provider is: the
// seams live in many packages and a span's parent travels in the context,
// so one provider per process is what every seam must share. Setup also
// installs it as otel's global provider and the W3C propagators as otel's
// global propagator, for libraries instrumented against the globals.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// InstrumentationName names AgentCraft's tracer (the instrumentation scope
// of every span it makes).
const InstrumentationName = "github.com/agentcraftlab/agentcraft"

// DefaultServiceName is Config.ServiceName's default.
const DefaultServiceName = "agentcraft"

// Config configures Setup.
type Config struct {
	// Endpoint is the OTLP/HTTP receiver: a base URL such as
	// http://127.0.0.1:4318, to which /v1/traces is appended (as for
	// OTEL_EXPORTER_OTLP_ENDPOINT), or a URL already ending in /v1/traces.
	// Required.
	Endpoint string
	// SampleRatio is the share of new traces recorded, 0 to 1; a request
	// that arrives with a sampled traceparent is recorded whatever the
	// ratio (parent-based sampling). Setup refuses values outside [0, 1].
	SampleRatio float64
	// CaptureContent records prompts, completions, tool arguments and tool
	// results on the spans (gen_ai.input.messages, gen_ai.output.messages,
	// gen_ai.tool.call.arguments, gen_ai.tool.call.result). Default false:
	// spans carry names, ids, token counts and timings only.
	CaptureContent bool
	// ServiceName is the resource's service.name. Default
	// DefaultServiceName.
	ServiceName string
	// ServiceVersion is the resource's service.version. Default none.
	ServiceVersion string
	// Timeout bounds one export. Default 10 s.
	Timeout time.Duration
	// BatchTimeout is the longest a finished span waits before it is
	// exported. Default 5 s (the SDK's).
	BatchTimeout time.Duration
}

// state is what Setup installs: the tracer every seam starts spans with,
// and whether content is recorded.
type state struct {
	tracer  trace.Tracer
	capture bool
}

// current is the installed state; nil while tracing is off. It is the
// one process-wide value of the package, set by Setup and cleared by
// Shutdown, so that a seam's check costs one atomic load.
var current atomic.Pointer[state]

// Enabled reports whether tracing is on. Seams check it before building a
// span's name or attributes.
func Enabled() bool { return current.Load() != nil }

// CaptureContent reports whether spans record prompts, completions and
// tool arguments and results (Config.CaptureContent).
func CaptureContent() bool {
	s := current.Load()
	return s != nil && s.capture
}

// noopSpan is what Start returns while tracing is off: a zero-size value,
// so returning it as a trace.Span allocates nothing.
var noopSpan trace.Span = noop.Span{}

// Start opens a span named name of kind under ctx's span (or the remote
// parent Handler extracted). While tracing is off it returns ctx and a
// span that records nothing.
func Start(ctx context.Context, name string, kind trace.SpanKind, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	s := current.Load()
	if s == nil {
		return ctx, noopSpan
	}
	return s.tracer.Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
}

// propagator reads and writes W3C traceparent/tracestate and baggage.
var propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// Provider is the TracerProvider Setup installed.
type Provider struct {
	tp   *sdktrace.TracerProvider
	self *state
}

// Setup checks cfg, builds the exporter and the TracerProvider and
// installs them: from then on Start records spans. It does not contact the
// endpoint; an unreachable receiver costs dropped spans (the SDK reports
// them through otel's error handler), never a failed request.
func Setup(ctx context.Context, cfg Config) (*Provider, error) {
	endpoint, err := TracesURL(cfg.Endpoint)
	if err != nil {
		return nil, err
	}
	if cfg.SampleRatio < 0 || cfg.SampleRatio > 1 {
		return nil, fmt.Errorf("tracing: sample ratio %v is outside 0..1", cfg.SampleRatio)
	}
	if cfg.ServiceName == "" {
		cfg.ServiceName = DefaultServiceName
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(endpoint), otlptracehttp.WithTimeout(cfg.Timeout))
	if err != nil {
		return nil, fmt.Errorf("tracing: exporter: %w", err)
	}
	attrs := []attribute.KeyValue{attribute.String("service.name", cfg.ServiceName)}
	if cfg.ServiceVersion != "" {
		attrs = append(attrs, attribute.String("service.version", cfg.ServiceVersion))
	}
	// Schemaless: merging with the SDK's default resource (telemetry.sdk.*)
	// then never fails on two schema URLs.
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(attrs...))
	if err != nil {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	var batch []sdktrace.BatchSpanProcessorOption
	if cfg.BatchTimeout > 0 {
		batch = append(batch, sdktrace.WithBatchTimeout(cfg.BatchTimeout))
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp, batch...),
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(cfg.SampleRatio))),
	)
	p := &Provider{tp: tp, self: &state{tracer: tp.Tracer(InstrumentationName), capture: cfg.CaptureContent}}
	current.Store(p.self)
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagator)
	return p, nil
}

// Install makes tp the provider the seams start spans with, recording
// content when capture is set, until the returned function is called: for
// a program that builds its own provider, and for tests that record spans
// in memory (go.opentelemetry.io/otel/sdk/trace/tracetest).
func Install(tp trace.TracerProvider, capture bool) (uninstall func()) {
	s := &state{tracer: tp.Tracer(InstrumentationName), capture: capture}
	current.Store(s)
	return func() { current.CompareAndSwap(s, nil) }
}

// Shutdown stops recording, exports the spans still buffered and closes
// the exporter; ctx bounds the flush. Later calls do nothing.
func (p *Provider) Shutdown(ctx context.Context) error {
	if p == nil {
		return nil
	}
	// Only this provider's own state is cleared: a later Setup's stays.
	current.CompareAndSwap(p.self, nil)
	if err := p.tp.Shutdown(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("tracing: flush spans: %w", err)
	}
	return nil
}

// ForceFlush exports the spans finished so far.
func (p *Provider) ForceFlush(ctx context.Context) error { return p.tp.ForceFlush(ctx) }

// TracesURL is the URL spans are posted to for endpoint: the endpoint
// itself when its path ends in /v1/traces, else the endpoint with
// /v1/traces appended (OTEL_EXPORTER_OTLP_ENDPOINT's rule). It refuses
// anything but an absolute http or https URL.
func TracesURL(endpoint string) (string, error) {
	if strings.TrimSpace(endpoint) == "" {
		return "", errors.New("tracing: endpoint is empty: give the OTLP/HTTP receiver's URL, such as http://127.0.0.1:4318")
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", fmt.Errorf("tracing: endpoint %q is not a URL: %v", endpoint, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("tracing: endpoint %q is not an http:// or https:// URL with a host (OTLP/HTTP, such as http://127.0.0.1:4318)", endpoint)
	}
	if !strings.HasSuffix(u.Path, "/v1/traces") {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
	}
	return u.String(), nil
}
