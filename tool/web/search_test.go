package web

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/tool"
)

// seen is the request a fake back end received.
type seen struct {
	Method, Path string
	Query        url.Values
	Header       map[string]string // only the headers the test names
	Body         string
}

// fakeBackend answers every request with status and body and records it.
func fakeBackend(t *testing.T, status int, body string, headers ...string) (*httptest.Server, *[]seen) {
	t.Helper()
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s := seen{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Header: map[string]string{}, Body: string(b)}
		for _, h := range headers {
			s.Header[h] = r.Header.Get(h)
		}
		got = append(got, s)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, &got
}

func call(t *testing.T, tl tool.Tool, args string) tool.Result {
	t.Helper()
	res, err := tl.Call(context.Background(), json.RawMessage(args))
	if err != nil {
		t.Fatalf("Call(%s): %v", args, err)
	}
	return res
}

func TestSearchBackends(t *testing.T) {
	const (
		searxngBody = `{"query":"go fuzz","results":[
			{"title":"Go Fuzzing","url":"https://go.dev/doc/security/fuzz/","content":"Go supports fuzzing in its standard toolchain.","engine":"duckduckgo"},
			{"title":"  Tutorial:\n fuzzing ","url":"https://go.dev/doc/tutorial/fuzz","content":"This tutorial introduces the basics of fuzzing."},
			{"title":"third","url":"https://example.com/3","content":""}]}`
		braveBody = `{"type":"search","query":{"original":"go fuzz"},"web":{"type":"search","results":[
			{"title":"Go Fuzzing","url":"https://go.dev/doc/security/fuzz/","description":"Go supports <strong>fuzzing</strong> &amp; more."},
			{"title":"Tutorial","url":"https://go.dev/doc/tutorial/fuzz","description":"Basics."}]}}`
		tavilyBody = `{"query":"go fuzz","response_time":1.2,"results":[
			{"title":"Go Fuzzing","url":"https://go.dev/doc/security/fuzz/","content":"Go supports fuzzing.","score":0.9}]}`
	)
	t.Run("searxng", func(t *testing.T) {
		srv, got := fakeBackend(t, 200, searxngBody, "Accept", "Authorization")
		s, err := NewSearch(SearXNG, &SearchOptions{BaseURL: srv.URL + "/sx/"})
		if err != nil {
			t.Fatal(err)
		}
		res := call(t, s, `{"query":"go fuzz"}`)
		want := "1. Go Fuzzing\n   https://go.dev/doc/security/fuzz/\n   Go supports fuzzing in its standard toolchain.\n\n" +
			"2. Tutorial: fuzzing\n   https://go.dev/doc/tutorial/fuzz\n   This tutorial introduces the basics of fuzzing.\n\n" +
			"3. third\n   https://example.com/3"
		if res.IsError || res.Content != want {
			t.Errorf("result (error %v):\n%s\nwant:\n%s", res.IsError, res.Content, want)
		}
		wantReq := []seen{{Method: "GET", Path: "/sx/search", Query: url.Values{"q": {"go fuzz"}, "format": {"json"}},
			Header: map[string]string{"Accept": "application/json", "Authorization": ""}}}
		if d := cmp.Diff(wantReq, *got); d != "" {
			t.Errorf("request (-want +got):\n%s", d)
		}
		res = call(t, s, `{"query":"go fuzz","max_results":2}`)
		if strings.Contains(res.Content, "3. ") || !strings.Contains(res.Content, "2. ") {
			t.Errorf("max_results 2 gave:\n%s", res.Content)
		}
	})
	t.Run("brave", func(t *testing.T) {
		srv, got := fakeBackend(t, 200, braveBody, "Accept", "X-Subscription-Token")
		s, err := NewSearch(Brave, &SearchOptions{BaseURL: srv.URL, APIKey: "brave-key"})
		if err != nil {
			t.Fatal(err)
		}
		res := call(t, s, `{"query":"go fuzz","max_results":7}`)
		want := "1. Go Fuzzing\n   https://go.dev/doc/security/fuzz/\n   Go supports fuzzing & more.\n\n2. Tutorial\n   https://go.dev/doc/tutorial/fuzz\n   Basics."
		if res.IsError || res.Content != want {
			t.Errorf("result (error %v):\n%s\nwant:\n%s", res.IsError, res.Content, want)
		}
		wantReq := []seen{{Method: "GET", Path: "/res/v1/web/search", Query: url.Values{"q": {"go fuzz"}, "count": {"7"}},
			Header: map[string]string{"Accept": "application/json", "X-Subscription-Token": "brave-key"}}}
		if d := cmp.Diff(wantReq, *got); d != "" {
			t.Errorf("request (-want +got):\n%s", d)
		}
	})
	t.Run("tavily", func(t *testing.T) {
		srv, got := fakeBackend(t, 200, tavilyBody, "Authorization", "Content-Type")
		s, err := NewSearch(Tavily, &SearchOptions{BaseURL: srv.URL, APIKey: "tvly-key", MaxResults: 3})
		if err != nil {
			t.Fatal(err)
		}
		res := call(t, s, `{"query":"go fuzz"}`)
		want := "1. Go Fuzzing\n   https://go.dev/doc/security/fuzz/\n   Go supports fuzzing."
		if res.IsError || res.Content != want {
			t.Errorf("result (error %v):\n%s\nwant:\n%s", res.IsError, res.Content, want)
		}
		// No max_results: DefaultSearchResults, lowered to MaxResults 3.
		wantReq := []seen{{Method: "POST", Path: "/search", Query: url.Values{}, Body: `{"query":"go fuzz","max_results":3}`,
			Header: map[string]string{"Authorization": "Bearer tvly-key", "Content-Type": "application/json"}}}
		if d := cmp.Diff(wantReq, *got); d != "" {
			t.Errorf("request (-want +got):\n%s", d)
		}
		res = call(t, s, `{"query":"go fuzz","max_results":4}`)
		if !res.IsError || !strings.Contains(res.Content, "max_results") {
			t.Errorf("max_results over the configured 3: %+v, want an error naming max_results", res)
		}
	})
}

func TestSearchErrors(t *testing.T) {
	tests := []struct {
		name    string
		backend SearchBackend
		status  int
		body    string
		want    []string
	}{
		{"brave unauthorized", Brave, 401, `{"error":"bad token"}`, []string{"brave", "HTTP 401", "api_key"}},
		{"tavily rate limit", Tavily, 429, `{}`, []string{"tavily", "HTTP 429", "rate limit"}},
		{"searxng json off", SearXNG, 403, `forbidden`, []string{"searxng", "HTTP 403", "search.formats"}},
		{"searxng server error", SearXNG, 502, `bad gateway`, []string{"searxng", "HTTP 502", "bad gateway"}},
		{"brave bad json", Brave, 200, `<html>not json</html>`, []string{"brave", "HTTP 200", "not its search JSON"}},
		{"tavily wrong json", Tavily, 200, `{"answer":"x"}`, []string{"tavily", `no "results" array`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := fakeBackend(t, tt.status, tt.body)
			s, err := NewSearch(tt.backend, &SearchOptions{BaseURL: srv.URL, APIKey: "k"})
			if err != nil {
				t.Fatal(err)
			}
			res := call(t, s, `{"query":"x"}`)
			if !res.IsError {
				t.Fatalf("result %q is not an error", res.Content)
			}
			for _, w := range tt.want {
				if !strings.Contains(res.Content, w) {
					t.Errorf("error %q does not mention %q", res.Content, w)
				}
			}
		})
	}
	t.Run("retry-after", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(429)
		}))
		defer srv.Close()
		s, _ := NewSearch(Brave, &SearchOptions{BaseURL: srv.URL, APIKey: "k"})
		if res := call(t, s, `{"query":"x"}`); !strings.Contains(res.Content, "Retry-After: 30") {
			t.Errorf("429 result %q does not pass Retry-After on", res.Content)
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		srv.Close()
		s, _ := NewSearch(SearXNG, &SearchOptions{BaseURL: srv.URL})
		res := call(t, s, `{"query":"x"}`)
		if !res.IsError || !strings.Contains(res.Content, "cannot reach searxng") {
			t.Errorf("result %+v, want an error saying searxng cannot be reached", res)
		}
	})
	t.Run("no results", func(t *testing.T) {
		srv, _ := fakeBackend(t, 200, `{"type":"search","query":{"original":"zzz"}}`)
		s, _ := NewSearch(Brave, &SearchOptions{BaseURL: srv.URL, APIKey: "k"})
		if res := call(t, s, `{"query":"zzz"}`); res.IsError || res.Content != `No results for "zzz".` {
			t.Errorf("result %+v, want no results", res)
		}
	})
	t.Run("bad arguments", func(t *testing.T) {
		srv, got := fakeBackend(t, 200, `{"results":[]}`)
		s, _ := NewSearch(SearXNG, &SearchOptions{BaseURL: srv.URL})
		for _, args := range []string{`{}`, `{"query":"   "}`, `{"query":"x","max_results":0}`, `{"q":"x"}`} {
			if res := call(t, s, args); !res.IsError {
				t.Errorf("Call(%s) = %q, want an error", args, res.Content)
			}
		}
		if len(*got) != 0 {
			t.Errorf("bad arguments reached the back end %d times", len(*got))
		}
	})
}

func TestNewSearchRefuses(t *testing.T) {
	for _, tt := range []struct {
		backend SearchBackend
		opts    *SearchOptions
		want    string
	}{
		{SearXNG, nil, "base URL"},
		{Brave, nil, "API key"},
		{Tavily, &SearchOptions{BaseURL: "https://api.tavily.com"}, "API key"},
		{"google", &SearchOptions{APIKey: "k"}, "searxng, brave or tavily"},
		{SearXNG, &SearchOptions{BaseURL: "searxng:8080"}, "absolute"},
		{Brave, &SearchOptions{APIKey: "k", MaxResults: 50}, "1 to 20"},
	} {
		_, err := NewSearch(tt.backend, tt.opts)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("NewSearch(%s, %+v) = %v, want an error mentioning %q", tt.backend, tt.opts, err, tt.want)
		}
	}
	s, err := NewSearch(Brave, &SearchOptions{APIKey: "k"})
	if err != nil || s.base.String() != DefaultBraveURL {
		t.Errorf("Brave default base = %v, %v; want %s", s, err, DefaultBraveURL)
	}
}
