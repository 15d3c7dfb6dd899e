package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"sync"
	"time"

	"github.com/agentcraftlab/agentcraft/internal/egress"
)

// proxy is the HTTP proxy on 127.0.0.1 that one browser call's Chromium
// sends all its traffic through (--proxy-server, with no bypass). It
// connects only with the egress guard's dialer, whose check runs on the
// address actually dialed, so whatever the interception in the page
// cannot see — a cross-site iframe's requests, a pop-up, a worker, a
// WebSocket — and a DNS answer that changes after the interception's
// check still cannot reach what the policy refuses. Chromium does not
// resolve names itself when it uses a proxy.
type proxy struct {
	guard *egress.Guard
	ln    net.Listener
	srv   *http.Server
	fwd   *httputil.ReverseProxy
	// onRefused is told of each destination the policy refused.
	onRefused func(target string, err error)

	mu sync.Mutex // guards tunnels and closed
	// tunnels are the CONNECT tunnels open now, closed by close.
	tunnels map[net.Conn]struct{}
	closed  bool
	// wg counts the tunnels' copy goroutines and the server's goroutine.
	wg sync.WaitGroup
}

// startProxy listens on a free port of 127.0.0.1 and serves until close.
func startProxy(g *egress.Guard, onRefused func(target string, err error)) (*proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("web: browser: proxy: %w", err)
	}
	p := &proxy{guard: g, ln: ln, onRefused: onRefused, tunnels: map[net.Conn]struct{}{}}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           g.DialContext,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       30 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 60 * time.Second,
	}
	p.fwd = &httputil.ReverseProxy{
		// The request already names its destination (absolute form);
		// Rewrite mode drops hop-by-hop and X-Forwarded-* headers.
		Rewrite:   func(*httputil.ProxyRequest) {},
		Transport: tr,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			u := *r.URL
			u.RawQuery, u.Fragment = "", ""
			p.refuse(w, u.Redacted(), err)
		},
		ErrorLog: nil,
	}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second, ErrorLog: discardLog}
	p.wg.Go(func() { _ = p.srv.Serve(ln) })
	return p, nil
}

// url is the proxy's address for --proxy-server.
func (p *proxy) url() string { return "http://" + p.ln.Addr().String() }

// close stops the proxy: the listener, every open connection and tunnel,
// and waits for their goroutines.
func (p *proxy) close() {
	p.mu.Lock()
	p.closed = true
	for c := range p.tunnels {
		c.Close()
	}
	p.mu.Unlock()
	_ = p.srv.Close()
	p.wg.Wait()
	if tr, ok := p.fwd.Transport.(*http.Transport); ok {
		tr.CloseIdleConnections()
	}
}

// ServeHTTP implements http.Handler: CONNECT opens a tunnel (HTTPS,
// WebSockets), a request in absolute form is forwarded, anything else is
// refused (a page calling the proxy's own address directly).
func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodConnect:
		p.tunnel(w, r)
	case r.URL.IsAbs() && (r.URL.Scheme == "http" || r.URL.Scheme == "ws"):
		if r.URL.Scheme == "ws" {
			r.URL.Scheme = "http"
		}
		p.fwd.ServeHTTP(w, r)
	default:
		http.Error(w, "not a proxy request", http.StatusBadRequest)
	}
}

// tunnel dials r.Host through the guard and splices the two connections.
func (p *proxy) tunnel(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	upstream, err := p.guard.DialContext(ctx, "tcp", r.Host)
	cancel()
	if err != nil {
		p.refuse(w, r.Host, err)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		upstream.Close()
		http.Error(w, "tunnels are not supported", http.StatusInternalServerError)
		return
	}
	client, buf, err := hj.Hijack()
	if err != nil {
		upstream.Close()
		return
	}
	if !p.track(client, upstream) {
		client.Close()
		upstream.Close()
		return
	}
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection Established\r\n\r\n"); err != nil {
		p.untrack(client, upstream)
		return
	}
	p.wg.Go(func() {
		defer p.untrack(client, upstream)
		done := make(chan struct{})
		go func() {
			defer close(done)
			// Bytes the client sent after the CONNECT line, then
			// the rest.
			_, _ = io.Copy(upstream, buf.Reader)
			if tc, ok := upstream.(*net.TCPConn); ok {
				_ = tc.CloseWrite()
			}
		}()
		_, _ = io.Copy(client, upstream)
		client.Close()
		upstream.Close()
		<-done
	})
}

// track records an open tunnel; false once the proxy is closing.
func (p *proxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	for _, c := range conns {
		p.tunnels[c] = struct{}{}
	}
	return true
}

func (p *proxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		c.Close()
		delete(p.tunnels, c)
	}
}

// refuse answers a request the proxy could not connect for: 403 when the
// policy refused it (and tells onRefused), 502 otherwise.
func (p *proxy) refuse(w http.ResponseWriter, target string, err error) {
	if errors.Is(err, egress.ErrBlocked) {
		if p.onRefused != nil {
			p.onRefused(target, err)
		}
		http.Error(w, "refused by the outbound policy", http.StatusForbidden)
		return
	}
	http.Error(w, "cannot connect", http.StatusBadGateway)
}

// discardLog silences net/http's own logging of the proxy's connection
// errors (a browser killed mid-request is normal at the end of a call).
var discardLog = log.New(io.Discard, "", 0)
