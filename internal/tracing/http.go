package tracing

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Handler returns next with one server span per request: it continues the
// caller's trace when the request carries a W3C traceparent, and is named
// by the route pattern that served it ("POST /v1/chat/completions", with
// http.route "/v1/chat/completions"), never by the raw path, whose ids
// would make every name unique. next must be (or end in) an
// http.ServeMux: the pattern is what the mux recorded on the request.
// While tracing is off it calls next directly.
func Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !Enabled() {
			next.ServeHTTP(w, r)
			return
		}
		ctx := propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		// No url.path: paths carry ids and the one-time tokens of sign-in
		// links; the route names the request well enough.
		ctx, span := Start(ctx, r.Method, trace.SpanKindServer,
			attribute.String("http.request.method", r.Method),
			attribute.String("url.scheme", scheme(r)))
		defer span.End()
		sw := &statusWriter{ResponseWriter: w}
		// The mux records the pattern on the request it is handed; this
		// copy is the one it gets.
		r = r.WithContext(ctx)
		next.ServeHTTP(sw, r)
		status := sw.status
		if status == 0 {
			status = http.StatusOK
		}
		span.SetAttributes(attribute.Int("http.response.status_code", status))
		if route := routeOf(r.Pattern); route != "" {
			span.SetName(r.Method + " " + route)
			span.SetAttributes(attribute.String("http.route", route))
		}
		if status >= 500 {
			span.SetAttributes(attribute.String("error.type", strconv.Itoa(status)))
			span.SetStatus(codes.Error, http.StatusText(status))
		}
	})
}

// routeOf is the path template of a ServeMux pattern: "POST
// /v1/chat/completions" and "example.com/v1/" give "/v1/chat/completions"
// and "/v1/".
func routeOf(pattern string) string {
	if _, after, ok := strings.Cut(pattern, " "); ok {
		pattern = after
	}
	if i := strings.IndexByte(pattern, '/'); i > 0 {
		pattern = pattern[i:]
	}
	return pattern
}

func scheme(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	return "http"
}

// statusWriter remembers the status a handler answered with. It keeps
// streaming working: Flush is passed on, and Unwrap lets
// http.ResponseController reach the connection's own writer.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Transport returns base (http.DefaultTransport when nil) sending every
// request with the W3C traceparent of its context's span, inside a client
// span of its own ("GET", with http.request.method, server.address and
// http.response.status_code), so that an MCP server, an A2A agent or an
// HTTP API called by a tool continues the run's trace. Wrapping a
// Transport twice makes one client span, not two. While tracing is off a
// request goes through untouched.
func Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	if t, ok := base.(*transport); ok {
		return t
	}
	return &transport{base: base}
}

type transport struct{ base http.RoundTripper }

// clientSpanKey marks a context whose request already has its client span
// (an inner Transport of a chain only injects).
type clientSpanKey struct{}

// InClientSpan marks ctx as being inside a client span of its own (a
// model call's "chat" span): a request sent within it through Transport
// carries that span's traceparent and makes no HTTP span under it.
func InClientSpan(ctx context.Context) context.Context {
	return context.WithValue(ctx, clientSpanKey{}, true)
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !Enabled() {
		return t.base.RoundTrip(req)
	}
	ctx := req.Context()
	if !trace.SpanContextFromContext(ctx).IsValid() {
		// No trace to continue: a background request (a token refresh,
		// a reconnect) gets neither a root span nor a header.
		return t.base.RoundTrip(req)
	}
	var span trace.Span
	if ctx.Value(clientSpanKey{}) == nil {
		host, port := req.URL.Hostname(), req.URL.Port()
		attrs := []attribute.KeyValue{
			attribute.String("http.request.method", req.Method),
			attribute.String("server.address", host),
		}
		if n, err := strconv.Atoi(port); err == nil {
			attrs = append(attrs, attribute.Int("server.port", n))
		}
		ctx, span = Start(ctx, req.Method, trace.SpanKindClient, attrs...)
		defer span.End()
		ctx = context.WithValue(ctx, clientSpanKey{}, true)
	}
	// RoundTrippers must not change the caller's request.
	req = req.Clone(ctx)
	propagator.Inject(ctx, propagation.HeaderCarrier(req.Header))
	resp, err := t.base.RoundTrip(req)
	if span != nil {
		switch {
		case err != nil:
			span.SetAttributes(attribute.String("error.type", errorType(err)))
			span.SetStatus(codes.Error, err.Error())
		default:
			span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode))
			if resp.StatusCode >= 400 {
				span.SetAttributes(attribute.String("error.type", strconv.Itoa(resp.StatusCode)))
				span.SetStatus(codes.Error, http.StatusText(resp.StatusCode))
			}
		}
	}
	return resp, err
}

// errorType is error.type of a failed request: timeout, dial or other.
func errorType(err error) string {
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case strings.Contains(err.Error(), "dial"):
		return "connection_failed"
	}
	return "_OTHER"
}
