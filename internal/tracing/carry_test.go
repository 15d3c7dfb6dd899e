package tracing

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

// TestCarryAndContinue: the trace context Carry takes from a request's
// span makes a span started later, from a bare context (another process's
// queue worker), a child of that span in its trace; a context with a span
// of its own keeps it; and with tracing off nothing is carried.
func TestCarryAndContinue(t *testing.T) {
	if tp, ts := Carry(context.Background()); tp != "" || ts != "" {
		t.Fatalf("Carry with tracing off = %q %q, want nothing", tp, ts)
	}
	if ctx := Continue(context.Background(), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", ""); trace.SpanContextFromContext(ctx).IsValid() {
		t.Fatal("Continue with tracing off gave the context a span")
	}

	rec := record(t)
	if tp, ts := Carry(context.Background()); tp != "" || ts != "" {
		t.Errorf("Carry of a context without a span = %q %q, want nothing", tp, ts)
	}
	reqCtx, req := Start(context.Background(), "POST /api/workflows/{id}/runs", trace.SpanKindServer)
	ts, err := trace.ParseTraceState("vendor=opaque")
	if err != nil {
		t.Fatal(err)
	}
	reqCtx = trace.ContextWithSpanContext(reqCtx, req.SpanContext().WithTraceState(ts))
	tp, state := Carry(reqCtx)
	req.End()
	if tp == "" || state != "vendor=opaque" {
		t.Fatalf("Carry = %q %q, want a traceparent and the tracestate", tp, state)
	}

	ctx := Continue(context.Background(), tp, state)
	_, run := Start(ctx, "run_workflow memo", trace.SpanKindInternal)
	run.End()
	spans := rec.Ended()
	if len(spans) != 2 {
		t.Fatalf("%d spans ended, want 2", len(spans))
	}
	got := spans[1]
	if got.Parent().SpanID() != req.SpanContext().SpanID() || got.SpanContext().TraceID() != req.SpanContext().TraceID() || !got.Parent().IsRemote() {
		t.Errorf("continued span: parent %v in trace %v, want the request's span %v (remote) in %v",
			got.Parent().SpanID(), got.SpanContext().TraceID(), req.SpanContext().SpanID(), req.SpanContext().TraceID())
	}
	if got.SpanContext().TraceState().Get("vendor") != "opaque" {
		t.Errorf("continued span's tracestate = %q, want vendor=opaque", got.SpanContext().TraceState())
	}

	// A context with its own span keeps it as the parent.
	own, mine := Start(context.Background(), "resume", trace.SpanKindServer)
	if c := Continue(own, tp, state); trace.SpanContextFromContext(c).SpanID() != mine.SpanContext().SpanID() {
		t.Error("Continue replaced the context's own span")
	}
	mine.End()
	for _, bad := range []string{"", "garbage", "00-00000000000000000000000000000000-00f067aa0ba902b7-01"} {
		if c := Continue(context.Background(), bad, ""); trace.SpanContextFromContext(c).IsValid() {
			t.Errorf("Continue(%q) gave the context a span", bad)
		}
	}
}
