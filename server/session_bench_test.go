package server_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/server/httpapi"
	"github.com/agentcraftlab/agentcraft/server/servertest"
)

// BenchmarkAuthenticatedRequest is the cost of authentication on a cheap
// route (GET /api/providers) by credential: an API key (answered from the
// key cache), a browser session (a session and a member lookup in the
// store each time), and a session naming its workspace in X-Workspace. It
// reports p50 and p99 per request.
func BenchmarkAuthenticatedRequest(b *testing.B) {
	pe := newPeopleEnv(b, &servertest.Options{Identity: &identity.Options{TouchInterval: time.Hour}})
	in, err := pe.Identity.Login(b.Context(), "ann@example.com", annPassword, identity.Client{RemoteAddr: "192.0.2.1:1"})
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		set  func(*http.Request)
	}{
		{"api_key", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+pe.Key) }},
		{"session", func(r *http.Request) { r.AddCookie(&http.Cookie{Name: httpapi.SessionCookie, Value: in.Token}) }},
		{"session_x_workspace", func(r *http.Request) {
			r.AddCookie(&http.Cookie{Name: httpapi.SessionCookie, Value: in.Token})
			r.Header.Set(httpapi.WorkspaceHeader, "default")
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			for b.Loop() {
				req, _ := http.NewRequest("GET", pe.URL+"/api/providers", nil)
				bc.set(req)
				start := time.Now()
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				resp.Body.Close()
				lat = append(lat, time.Since(start))
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}
