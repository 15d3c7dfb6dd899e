package egress_test

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/internal/egress"
)

func compile(t *testing.T, p egress.Policy) *egress.Guard {
	t.Helper()
	g, err := p.Compile()
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return g
}

func TestCompileNamesBadEntry(t *testing.T) {
	_, err := (&egress.Policy{Allow: []string{"10.0.0.0/8", "http://intranet/"}}).Compile()
	if err == nil || !strings.Contains(err.Error(), `"http://intranet/"`) {
		t.Fatalf("Compile = %v, want an error naming the entry", err)
	}
	for _, p := range []egress.Policy{{MaxResponseBytes: -1}, {Timeout: -time.Second}} {
		if _, err := p.Compile(); err == nil {
			t.Errorf("Compile(%+v) succeeded, want an error", p)
		}
	}
}

func TestCheckURL(t *testing.T) {
	g := compile(t, egress.Policy{Allow: []string{"10.1.0.0/16", "localhost:8080", "[::1]:9000", "*.corp.example"}})
	allowed := []string{
		"https://example.com/x", "http://8.8.8.8/", "HTTP://EXAMPLE.COM", "http://[2606:4700::1111]:8443/",
		"http://10.1.2.3/", "http://localhost:8080/", "http://[::1]:9000/",
		// Names are judged at dial time, by what they resolve to.
		"http://internal.example.com/", "http://a.corp.example/",
	}
	for _, u := range allowed {
		if err := g.CheckURL(u); err != nil {
			t.Errorf("CheckURL(%q) = %v, want nil", u, err)
		}
	}
	blocked := []string{
		"file:///etc/passwd", "gopher://example.com/", "ftp://example.com/", "example.com/x", "http:///x", "http://",
		"http://127.0.0.1/", "http://127.0.0.1:8080/", "http://[::1]/", "http://[::ffff:127.0.0.1]/",
		"http://169.254.169.254/latest/meta-data/", "http://[fe80::1%25eth0]/", "http://0.0.0.0:80/",
		"http://10.2.0.1/", "http://192.168.0.1/", "http://100.64.0.1/", "http://[fd00::1]/",
		"http://[64:ff9b::7f00:1]/", "http://localhost/", "http://LOCALHOST./", "http://a.localhost:8080/",
		"https://localhost/", "http://[::1]:9001/",
	}
	for _, u := range blocked {
		err := g.CheckURL(u)
		if !errors.Is(err, egress.ErrBlocked) {
			t.Errorf("CheckURL(%q) = %v, want ErrBlocked", u, err)
		}
	}
	if err := g.CheckURL("http://[::1"); err == nil || errors.Is(err, egress.ErrBlocked) {
		t.Errorf("CheckURL(malformed) = %v, want a parse error", err)
	}
}

func TestBlockedErrorNamesFix(t *testing.T) {
	g := compile(t, egress.Policy{})
	err := g.CheckURL("http://169.254.169.254/")
	var be *egress.BlockedError
	if !errors.As(err, &be) {
		t.Fatalf("CheckURL = %v, want a *BlockedError", err)
	}
	for _, want := range []string{"169.254.169.254", "metadata", "egress allow list"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

// server is an httptest server on 127.0.0.1 that counts its requests.
type server struct {
	*httptest.Server
	hits atomic.Int64
}

func newServer(t *testing.T, h http.HandlerFunc) *server {
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) port() string {
	u, _ := url.Parse(s.URL)
	return u.Port()
}

func hello(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "hello") }

func get(t *testing.T, g *egress.Guard, u string) (string, error) {
	t.Helper()
	resp, err := g.Client().Get(u)
	if err != nil {
		return "", err
	}
	b, err := egress.ReadBody(resp, g.MaxResponseBytes())
	return string(b), err
}

func TestClientRefusesLoopback(t *testing.T) {
	s := newServer(t, hello)
	_, err := get(t, compile(t, egress.Policy{}), s.URL)
	var be *egress.BlockedError
	if !errors.Is(err, egress.ErrBlocked) || !errors.As(err, &be) {
		t.Fatalf("Get(%s) = %v, want a *BlockedError", s.URL, err)
	}
	if be.Addr.String() != "127.0.0.1" {
		t.Errorf("BlockedError.Addr = %v, want 127.0.0.1", be.Addr)
	}
	if n := s.hits.Load(); n != 0 {
		t.Errorf("server got %d requests, want 0", n)
	}
}

func TestClientAllowListed(t *testing.T) {
	s := newServer(t, hello)
	for _, allow := range []string{"127.0.0.1", "127.0.0.0/8", "127.0.0.1:" + s.port(), "::ffff:127.0.0.1"} {
		body, err := get(t, compile(t, egress.Policy{Allow: []string{allow}}), s.URL)
		if err != nil || body != "hello" {
			t.Errorf("allow %q: Get = %q, %v; want hello", allow, body, err)
		}
	}
	_, err := get(t, compile(t, egress.Policy{Allow: []string{"127.0.0.1:1"}}), s.URL)
	if !errors.Is(err, egress.ErrBlocked) {
		t.Errorf("allow 127.0.0.1:1: Get(%s) = %v, want ErrBlocked (other port)", s.URL, err)
	}
}

// TestClientChecksResolvedAddress shows the check runs on the address
// dialed, not the name: "localhost" is refused because it resolves to a
// loopback address, and reported with that address.
func TestClientChecksResolvedAddress(t *testing.T) {
	s := newServer(t, hello)
	u := "http://localhost:" + s.port() + "/"
	_, err := get(t, compile(t, egress.Policy{}), u)
	var be *egress.BlockedError
	if !errors.As(err, &be) {
		t.Fatalf("Get(%s) = %v, want a *BlockedError", u, err)
	}
	if !be.Addr.IsLoopback() || be.Host != "localhost" {
		t.Errorf("BlockedError = %+v, want host localhost and a loopback address", be)
	}
	if s.hits.Load() != 0 {
		t.Error("the server was reached")
	}

	body, err := get(t, compile(t, egress.Policy{Allow: []string{"localhost"}}), u)
	if err != nil || body != "hello" {
		t.Errorf("allow localhost: Get = %q, %v; want hello", body, err)
	}
}

func TestClientRedirectToBlocked(t *testing.T) {
	target := newServer(t, hello)
	for _, to := range []string{
		target.URL, // literal IP, refused before dialing
		"http://localhost:" + target.port() + "/x", // name, refused at dial time
		"http://169.254.169.254/latest/meta-data/",
	} {
		front := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, to, http.StatusFound)
		})
		g := compile(t, egress.Policy{Allow: []string{"127.0.0.1:" + front.port()}})
		_, err := get(t, g, front.URL)
		if !errors.Is(err, egress.ErrBlocked) {
			t.Errorf("redirect to %s: Get = %v, want ErrBlocked", to, err)
		}
		if front.hits.Load() != 1 {
			t.Errorf("redirect to %s: front got %d requests, want 1", to, front.hits.Load())
		}
	}
	if target.hits.Load() != 0 {
		t.Errorf("the redirect target got %d requests, want 0", target.hits.Load())
	}
}

func TestClientRedirectLimit(t *testing.T) {
	var s *server
	s = newServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/again", http.StatusFound)
	})
	g := compile(t, egress.Policy{Allow: []string{"127.0.0.1"}})
	_, err := get(t, g, s.URL)
	if err == nil || !strings.Contains(err.Error(), "redirects") {
		t.Fatalf("Get = %v, want a too-many-redirects error", err)
	}
	if n := s.hits.Load(); n != egress.MaxRedirects+1 {
		t.Errorf("server got %d requests, want %d", n, egress.MaxRedirects+1)
	}
	// Below the limit redirects are followed.
	var hops atomic.Int64
	s2 := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if hops.Add(1) <= egress.MaxRedirects {
			http.Redirect(w, r, "/next", http.StatusFound)
			return
		}
		io.WriteString(w, "done")
	})
	if body, err := get(t, g, s2.URL); err != nil || body != "done" {
		t.Errorf("Get after %d redirects = %q, %v; want done", egress.MaxRedirects, body, err)
	}
}

func TestClientMaxResponseBytes(t *testing.T) {
	const max = 1024
	for _, tt := range []struct {
		size     int
		flush    bool // stream without Content-Length
		tooLarge bool
	}{
		{max, false, false},
		{max, true, false},
		{max + 1, false, true},
		{max + 1, true, true},
		{100 * max, true, true},
	} {
		s := newServer(t, func(w http.ResponseWriter, _ *http.Request) {
			if tt.flush {
				w.(http.Flusher).Flush()
			}
			w.Write([]byte(strings.Repeat("x", tt.size)))
		})
		g := compile(t, egress.Policy{Allow: []string{"127.0.0.1"}, MaxResponseBytes: max})
		resp, err := g.Client().Get(s.URL)
		if err != nil {
			t.Fatal(err)
		}
		// The client enforces the limit even on a plain io.ReadAll …
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got := errors.Is(err, egress.ErrTooLarge); got != tt.tooLarge {
			t.Errorf("size %d: ReadAll = %d bytes, %v; want ErrTooLarge %v", tt.size, len(b), err, tt.tooLarge)
		}
		// … and ReadBody with its own limit.
		resp, err = g.Client().Get(s.URL)
		if err != nil {
			t.Fatal(err)
		}
		b, err = egress.ReadBody(resp, max)
		if got := errors.Is(err, egress.ErrTooLarge); got != tt.tooLarge || (err == nil && len(b) != tt.size) {
			t.Errorf("size %d: ReadBody = %d bytes, %v; want ErrTooLarge %v", tt.size, len(b), err, tt.tooLarge)
		}
	}
}

func TestReadBodySmallerLimit(t *testing.T) {
	resp := &http.Response{Body: io.NopCloser(strings.NewReader("abcdef")), ContentLength: -1}
	if _, err := egress.ReadBody(resp, 5); !errors.Is(err, egress.ErrTooLarge) {
		t.Errorf("ReadBody(6 bytes, 5) = %v, want ErrTooLarge", err)
	}
	resp = &http.Response{Body: io.NopCloser(strings.NewReader("abcde")), ContentLength: -1}
	if b, err := egress.ReadBody(resp, 5); err != nil || string(b) != "abcde" {
		t.Errorf("ReadBody(5 bytes, 5) = %q, %v; want abcde", b, err)
	}
}

func TestClientTimeout(t *testing.T) {
	release := make(chan struct{})
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	g := compile(t, egress.Policy{Allow: []string{"127.0.0.1"}, Timeout: 100 * time.Millisecond})
	start := time.Now()
	_, err := get(t, g, s.URL)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("Get = %v, want a timeout", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Get took %s with a 100ms timeout", d)
	}
}

// TestClientIgnoresProxyEnvironment points HTTP_PROXY at a server that
// would answer for any host; the request must not go through it.
func TestClientIgnoresProxyEnvironment(t *testing.T) {
	proxy := newServer(t, func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "proxied") })
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("http_proxy", proxy.URL)
	t.Setenv("NO_PROXY", "")
	t.Setenv("no_proxy", "")
	g := compile(t, egress.Policy{})
	_, err := get(t, g, "http://proxied.invalid/")
	if err == nil {
		t.Fatal("Get through the environment's proxy succeeded")
	}
	if proxy.hits.Load() != 0 {
		t.Errorf("proxy got %d requests, want 0", proxy.hits.Load())
	}
}
