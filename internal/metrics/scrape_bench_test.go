package metrics

import (
	"io"
	"log/slog"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"
)

// BenchmarkScrape measures one /metrics scrape: AgentCraft's families
// alone, with the Go and process collectors, and with the SQLite database
// collector too. An idle server's garbage is mostly its scrapes', so
// B/op is the figure to watch (TestScrapeGarbage holds it).
func BenchmarkScrape(b *testing.B) {
	cases := []struct {
		name    string
		runtime bool
		db      bool
	}{{"families", false, false}, {"runtime", true, false}, {"runtime+sqlite", true, true}}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			m := New(&Options{NoRuntime: !c.runtime})
			if c.db {
				if err := m.WatchDatabase(sqliteBackend(b).db, &DatabaseOptions{Logger: slog.New(slog.DiscardHandler)}); err != nil {
					b.Fatal(err)
				}
			}
			m.WorkflowRun("succeeded", time.Second)
			m.WorkflowNode("agent", "succeeded", time.Second)
			m.ToolCall("kb_search", "ok", time.Second)
			h := m.Handler()
			req := httptest.NewRequest("GET", "/metrics", nil)
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != 200 {
					b.Fatalf("scrape = %d", w.Code)
				}
				_, _ = io.Copy(io.Discard, w.Body)
			}
		})
	}
}

// TestScrapeGarbage: a scrape as Prometheus sends it (Accept-Encoding:
// gzip), after a garbage collection as between two scrapes 15 s apart,
// allocates under 640 KB (~240 KB; ~470 KB with the race detector, which
// drops pooled objects). Compressed, it allocated ~1 MB: promhttp's
// gzip writer pool is emptied by every collection.
func TestScrapeGarbage(t *testing.T) {
	m := New(nil)
	if err := m.WatchDatabase(sqliteBackend(t).db, &DatabaseOptions{Logger: slog.New(slog.DiscardHandler)}); err != nil {
		t.Fatal(err)
	}
	h := m.Handler()
	scrape := func() (*httptest.ResponseRecorder, uint64) {
		req := httptest.NewRequest("GET", "/metrics", nil)
		req.Header.Set("Accept-Encoding", "gzip, deflate, zstd")
		w := httptest.NewRecorder()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&before)
		h.ServeHTTP(w, req)
		runtime.ReadMemStats(&after)
		return w, after.TotalAlloc - before.TotalAlloc
	}
	scrape() // the first one builds what every later one reuses
	w, garbage := scrape()
	t.Logf("one scrape: %d bytes (%q encoding), %d KB allocated", w.Body.Len(), w.Header().Get("Content-Encoding"), garbage/1024)
	if garbage > 640<<10 {
		t.Errorf("one scrape allocated %d KB; want under 640 KB", garbage/1024)
	}
	if w.Code != 200 || !strings.Contains(w.Body.String(), "agentcraft_database_up 1") {
		t.Fatalf("scrape = %d %q", w.Code, w.Body.String()[:min(300, w.Body.Len())])
	}
}
