package metrics

import (
	"net/http"
	"strconv"
	"time"
)

// Unmatched is the route label of a request no route pattern matched
// (ServeMux's own 404s and 405s, and the 404s of a catch-all "/"
// pattern): one series for every unknown path, never the path itself.
const Unmatched = "unmatched"

// HTTP counts and times the requests next serves, by the ServeMux pattern
// that matched (http.Request.Pattern, such as "POST /v1/chat/completions"),
// read once the handler returns: ServeMux sets it on the request it was
// handed, so next must be the mux itself or pass the request on unchanged
// (a nested mux's pattern, the more specific one, wins). A nil m returns
// next.
func (m *Metrics) HTTP(next http.Handler) http.Handler {
	if m == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			// Deferred so that a handler that panics (net/http recovers
			// it and drops the connection) is still counted.
			code := sw.status
			if code == 0 {
				code = http.StatusOK // nothing written: net/http answers 200
			}
			route := r.Pattern
			if route == "" || (route == "/" && code == http.StatusNotFound) {
				// No pattern, or a catch-all's "no route" answer.
				route = Unmatched
			}
			m.httpRequests.WithLabelValues(route, codeLabel(code)).Inc()
			m.httpDuration.WithLabelValues(route).Observe(time.Since(start).Seconds())
		}()
		next.ServeHTTP(sw, r)
	})
}

// statusWriter remembers the status code of the response. Unwrap lets
// http.ResponseController (SSE flushes, deadlines, hijacking) reach the
// connection's writer; Flush is there for handlers that assert
// http.Flusher directly.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		// 1xx informational answers (103 Early Hints) come before the
		// real one.
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
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// codes are the label values of the status codes net/http accepts, made
// once so that labelling a request allocates nothing.
var codes = func() []string {
	c := make([]string, 1000)
	for i := range c {
		c[i] = strconv.Itoa(i)
	}
	return c
}()

func codeLabel(code int) string {
	if code >= 0 && code < len(codes) {
		return codes[code]
	}
	return "other"
}
