package tracing

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// traceContext is the W3C trace-context part of the propagator: what work
// that carries on elsewhere later (a queued run) stores. Baggage is left
// out: it is the caller's data, and a stored row would keep it.
var traceContext = propagation.TraceContext{}

// Carry returns the W3C traceparent and tracestate of ctx's span, for work
// that another process continues later (a queued workflow run stores
// them; Continue reads them back). While tracing is off, or when ctx has
// no span, both are "" and nothing is allocated.
func Carry(ctx context.Context) (traceparent, tracestate string) {
	if current.Load() == nil || !trace.SpanContextFromContext(ctx).IsValid() {
		return "", ""
	}
	c := propagation.MapCarrier{}
	traceContext.Inject(ctx, c)
	return c["traceparent"], c["tracestate"]
}

// Continue returns ctx with the span context that traceparent and
// tracestate (as Carry gave them) describe as its remote parent, so the
// spans started under it join that trace, sampled as it was. It returns
// ctx unchanged while tracing is off, for an empty or malformed
// traceparent, and when ctx already has a span of its own (which stays the
// parent).
func Continue(ctx context.Context, traceparent, tracestate string) context.Context {
	if traceparent == "" || current.Load() == nil || trace.SpanContextFromContext(ctx).IsValid() {
		return ctx
	}
	return traceContext.Extract(ctx, propagation.MapCarrier{"traceparent": traceparent, "tracestate": tracestate})
}
