package web

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder collects the proxy's refusals.
type recorder struct {
	mu      sync.Mutex
	targets []string
}

func (r *recorder) refused(target string, _ error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.targets = append(r.targets, target)
}

func (r *recorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.targets...)
}

func TestProxy(t *testing.T) {
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "tls hello") }))
	defer tlsSrv.Close()
	plain, hits := counting(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "plain hello, X-Forwarded-For=%q Proxy-Connection=%q", r.Header.Get("X-Forwarded-For"), r.Header.Get("Proxy-Connection"))
	})

	via := func(p *proxy, base *http.Client) *http.Client {
		pu, _ := url.Parse(p.url())
		tr := base.Transport.(*http.Transport).Clone()
		tr.Proxy = http.ProxyURL(pu)
		return &http.Client{Transport: tr, Timeout: 10 * time.Second}
	}
	get := func(c *http.Client, u string) (int, string, error) {
		resp, err := c.Get(u)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), nil
	}

	var rec recorder
	open, err := startProxy(guard(t, hostPort(tlsSrv), hostPort(plain)), rec.refused)
	if err != nil {
		t.Fatal(err)
	}
	defer open.close()
	if code, body, err := get(via(open, tlsSrv.Client()), tlsSrv.URL+"/"); err != nil || code != 200 || body != "tls hello" {
		t.Errorf("CONNECT to an allowed server: %d %q %v", code, body, err)
	}
	if code, body, err := get(via(open, &http.Client{Transport: &http.Transport{}}), plain.URL+"/"); err != nil || code != 200 || body != `plain hello, X-Forwarded-For="" Proxy-Connection=""` {
		t.Errorf("GET through an allowed proxy: %d %q %v", code, body, err)
	}

	closed, err := startProxy(guard(t), rec.refused)
	if err != nil {
		t.Fatal(err)
	}
	defer closed.close()
	before := hits.Load()
	if _, _, err := get(via(closed, tlsSrv.Client()), tlsSrv.URL+"/"); err == nil || !strings.Contains(err.Error(), "Forbidden") {
		t.Errorf("CONNECT to a refused server: %v, want Forbidden", err)
	}
	if code, _, err := get(via(closed, &http.Client{Transport: &http.Transport{}}), plain.URL+"/x?secret=1"); err != nil || code != http.StatusForbidden {
		t.Errorf("GET to a refused server: %d %v, want 403", code, err)
	}
	if hits.Load() != before {
		t.Error("the refused server was reached")
	}
	want := []string{hostPort(tlsSrv), plain.URL + "/x"}
	if got := rec.list(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("refusals %q, want %q (no query strings)", got, want)
	}
	// A request to the proxy itself, not through it.
	if code, _, err := get(&http.Client{}, closed.url()+"/"); err != nil || code != http.StatusBadRequest {
		t.Errorf("direct request: %d %v, want 400", code, err)
	}
}

// TestProxyCloseEndsTunnels: close does not wait for a page that keeps a
// tunnel open; it closes it.
func TestProxyCloseEndsTunnels(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		c, err := ln.Accept()
		if err == nil {
			_, _ = io.Copy(io.Discard, c) // holds the tunnel open
			c.Close()
		}
	})
	p, err := startProxy(guard(t, ln.Addr().String()), nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", p.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %[1]s\r\n\r\n", ln.Addr())
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	done := make(chan struct{})
	go func() { p.close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("close waited for an open tunnel")
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Error("the tunnel is still open after close")
	}
}
