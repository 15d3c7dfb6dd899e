package metrics

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkHTTP measures what the middleware adds to one request: the
// same mux served bare and through Metrics.HTTP, in the same run. The
// request and recorder are reused so that only the handler path counts.
func BenchmarkHTTP(b *testing.B) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/runs/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
	})
	for _, c := range []struct {
		name string
		h    http.Handler
	}{
		{"bare", mux},
		{"metrics", New(&Options{NoRuntime: true}).HTTP(mux)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			req := httptest.NewRequest("GET", "/api/runs/run_123", nil)
			w := httptest.NewRecorder()
			for b.Loop() {
				c.h.ServeHTTP(w, req)
			}
		})
	}
}
