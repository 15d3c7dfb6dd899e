package studio_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/server/studio"
)

// get fetches path from the server at base without following redirects.
func get(t *testing.T, base, path string) (*http.Response, string) {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// rawGet sends path exactly as written, bypassing the client's cleaning,
// as an attacker's hand-written request would.
func rawGet(t *testing.T, base, path string) (int, string) {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", path, u.Host)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func newEnv(t *testing.T) *servertest.Env {
	return servertest.New(t, &servertest.Options{Studio: studio.Handler()})
}

func checkIndex(t *testing.T, path string, resp *http.Response, body string) {
	t.Helper()
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `<div id="root"></div>`) {
		t.Fatalf("GET %s = %d %.200s; want the studio's index.html", path, resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("GET %s Content-Type = %q", path, ct)
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "no-cache" {
		t.Errorf("GET %s Cache-Control = %q; want no-cache so that a new build is seen at once", path, cc)
	}
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"script-src 'self'", "default-src 'self'", "object-src 'none'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("GET %s CSP %q lacks %q", path, csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("GET %s CSP %q allows inline or eval'd code", path, csp)
	}
	if resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("Referrer-Policy") == "" {
		t.Errorf("GET %s headers %v lack nosniff or Referrer-Policy", path, resp.Header)
	}
}

func TestIndexAtRootAndClientRoutes(t *testing.T) {
	env := newEnv(t)
	for _, p := range []string{"/", "/chat", "/chat/some-thread", "/signin", "/studio/workflows/x"} {
		resp, body := get(t, env.URL, p)
		checkIndex(t, p, resp, body)
	}
}

// The app must satisfy its own CSP: every script is an external file of
// its own origin, none inline.
func TestIndexHasNoInlineScript(t *testing.T) {
	env := newEnv(t)
	_, body := get(t, env.URL, "/")
	for _, m := range regexp.MustCompile(`(?s)<script([^>]*)>(.*?)</script>`).FindAllStringSubmatch(body, -1) {
		if !strings.Contains(m[1], `src="/assets/`) || strings.TrimSpace(m[2]) != "" {
			t.Errorf("index.html has a script the CSP forbids: %s", m[0])
		}
	}
	if strings.Contains(body, " style=") {
		t.Errorf("index.html has an inline style attribute, which style-src 'self' forbids")
	}
}

func TestAssetsCachedForever(t *testing.T) {
	env := newEnv(t)
	_, index := get(t, env.URL, "/")
	for _, tc := range []struct {
		re, contentType string
	}{
		{`src="(/assets/[^"]+\.js)"`, "text/javascript; charset=utf-8"},
		{`href="(/assets/[^"]+\.css)"`, "text/css; charset=utf-8"},
	} {
		m := regexp.MustCompile(tc.re).FindStringSubmatch(index)
		if m == nil {
			t.Fatalf("index.html names no asset matching %s:\n%s", tc.re, index)
		}
		resp, body := get(t, env.URL, m[1])
		if resp.StatusCode != http.StatusOK || len(body) == 0 {
			t.Fatalf("GET %s = %d (%d bytes)", m[1], resp.StatusCode, len(body))
		}
		if ct := resp.Header.Get("Content-Type"); ct != tc.contentType {
			t.Errorf("GET %s Content-Type = %q; want %q", m[1], ct, tc.contentType)
		}
		if cc := resp.Header.Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
			t.Errorf("GET %s Cache-Control = %q; want a year, immutable", m[1], cc)
		}
		if resp.Header.Get("Content-Security-Policy") == "" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s lacks the security headers: %v", m[1], resp.Header)
		}
	}
	// A missing asset is a 404, not the app's page: a stale script URL
	// must fail loudly instead of running HTML as JavaScript.
	if resp, body := get(t, env.URL, "/assets/index-gone.js"); resp.StatusCode != http.StatusNotFound || strings.Contains(body, "<div id=\"root\">") {
		t.Errorf("GET a missing asset = %d %.100s; want 404", resp.StatusCode, body)
	}
}

func TestAPIPathsKeepJSON404(t *testing.T) {
	env := newEnv(t)
	for _, p := range []string{"/api/unknown", "/v1/unknown", "/agui", "/a2a/nothing/here", "/health/x"} {
		c := servertest.Client{T: t, Base: env.URL, Key: env.Key}
		resp, body := c.Do("GET", p, "")
		// Each surface writes its own error shape (A2A's is its own); all
		// are JSON 404s.
		var e map[string]any
		if resp.StatusCode != http.StatusNotFound || json.Unmarshal(body, &e) != nil || e["error"] == nil {
			t.Errorf("GET %s = %d %.200s; want a JSON 404, not the studio", p, resp.StatusCode, body)
		}
	}
	// Without a key too: the studio never answers an API path.
	resp, body := get(t, env.URL, "/api/unknown")
	if strings.Contains(body, `<div id="root">`) || resp.Header.Get("Content-Type") == "text/html; charset=utf-8" {
		t.Errorf("GET /api/unknown without a key = %d %.200s; want no studio page", resp.StatusCode, body)
	}
}

func TestPathTraversalRefused(t *testing.T) {
	env := newEnv(t)
	for _, p := range []string{"/../studio.go", "/assets/../../studio.go", "/%2e%2e/studio.go", "/assets/%2e%2e%2f%2e%2e%2fstudio.go", "/..%2fstudio_test.go", "/assets/..%5c..%5cstudio.go"} {
		code, body := rawGet(t, env.URL, p)
		if strings.Contains(body, "package studio") {
			t.Errorf("GET %s = %d served a source file", p, code)
		}
		if code == http.StatusOK && !strings.Contains(body, `<div id="root">`) {
			t.Errorf("GET %s = %d %.100s; want a refusal or the app's page", p, code, body)
		}
	}
}

func TestOnlyGetAndHead(t *testing.T) {
	env := newEnv(t)
	c := servertest.Client{T: t, Base: env.URL}
	if resp, _ := c.Do("POST", "/chat", `{}`); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /chat = %d; want 405", resp.StatusCode)
	}
	req, _ := http.NewRequest("HEAD", env.URL+"/chat", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Security-Policy") == "" {
		t.Errorf("HEAD /chat = %d %v", resp.StatusCode, resp.Header)
	}
}

func TestReserved(t *testing.T) {
	for p, want := range map[string]bool{"/api": true, "/api/x": true, "/apis": false, "/chat": false, "/.well-known/x": true, "/": false, "/healthy": false} {
		if got := studio.Reserved(p); got != want {
			t.Errorf("Reserved(%q) = %v; want %v", p, got, want)
		}
	}
}

// TestTraversalOutsideTheBuild serves a directory with a secret beside
// it and hands the handler raw paths that climb (the mux in front would
// clean them; a handler mounted elsewhere might not have one).
func TestTraversalOutsideTheBuild(t *testing.T) {
	h := studio.NewHandler(os.DirFS("testdata/site"))
	for _, p := range []string{"/../secret.txt", "/assets/../../secret.txt", "..\\secret.txt", "/assets/..%2f..%2fsecret.txt", "//../secret.txt"} {
		req := httptest.NewRequest("GET", "/", nil)
		req.URL.Path = p
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if strings.Contains(rec.Body.String(), "SECRET") {
			t.Errorf("GET %q = %d served the file outside the build", p, rec.Code)
		}
	}
	// The same handler does serve what is inside.
	req := httptest.NewRequest("GET", "/assets/app-abc123.js", nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "console.log") {
		t.Errorf("GET an asset of the build = %d %q", rec.Code, rec.Body.String())
	}
}

// TestInitialJSBudget: the scripts index.html loads before any page is
// drawn stay within 350 KB gzip (pages load lazily beyond that).
func TestInitialJSBudget(t *testing.T) {
	env := newEnv(t)
	_, index := get(t, env.URL, "/")
	total := 0
	for _, m := range regexp.MustCompile(`(?:src|href)="(/assets/[^"]+\.js)"`).FindAllStringSubmatch(index, -1) {
		_, body := get(t, env.URL, m[1])
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		zw.Write([]byte(body))
		zw.Close()
		t.Logf("%s: %.1f KB, %.1f KB gzip", m[1], float64(len(body))/1024, float64(buf.Len())/1024)
		total += buf.Len()
	}
	if total == 0 {
		t.Fatal("index.html loads no script")
	}
	if total > 350*1024 {
		t.Errorf("initial JavaScript is %.1f KB gzip; the budget is 350 KB", float64(total)/1024)
	}
}
