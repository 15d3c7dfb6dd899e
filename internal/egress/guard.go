package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentcraftlab/agentcraft/internal/tracing"
)

// ErrBlocked is wrapped by every refusal of the policy; test for it with
// errors.Is. Refusals of an address are *BlockedError values.
var ErrBlocked = errors.New("blocked by egress policy")

// Defaults of Policy.
const (
	DefaultMaxResponseBytes = 10 << 20
	DefaultTimeout          = 30 * time.Second
	// MaxRedirects is how many redirects a Client follows before giving up.
	MaxRedirects = 5
)

// Policy says where outbound requests may go.
type Policy struct {
	// Allow lists destinations that may be reached even though they are
	// loopback, private or otherwise non-public. Each entry is one of
	//
	//	127.0.0.1, ::1, [::1]    an IP address
	//	10.0.0.0/8, fd00::/8     a CIDR range
	//	internal.example.com     a host name, as written in the URL
	//	*.corp.example           any subdomain of corp.example (not corp.example itself)
	//
	// and any IP or host may end in a port ("localhost:8080", "[::1]:8443"),
	// which then is the only port allowed. A host name entry trusts whatever
	// that name resolves to, DNS rebinding included: list names whose DNS
	// you control. Public addresses need no entry. Default: empty, nothing
	// non-public is reachable.
	Allow []string
	// MaxResponseBytes caps the response body a Client reads; reading past
	// it fails with ErrTooLarge. Default (0): DefaultMaxResponseBytes, 10 MiB.
	MaxResponseBytes int64
	// Timeout bounds each request, redirects and reading the body included.
	// Default (0): DefaultTimeout, 30s.
	Timeout time.Duration
	// Resolver looks host names up, for the dialer and for CheckResolved.
	// Default (nil): net.DefaultResolver, the system's.
	Resolver *net.Resolver
}

// Guard is a compiled Policy. It is safe for concurrent use; share one per
// policy so that its clients share a connection pool.
type Guard struct {
	rules     []rule
	maxBody   int64
	timeout   time.Duration
	resolver  *net.Resolver
	dialer    *net.Dialer
	transport http.RoundTripper
}

// Compile checks the policy and returns its Guard. A malformed allow entry
// fails with an error naming it. Compile does not retain p.
func (p *Policy) Compile() (*Guard, error) {
	g := &Guard{maxBody: p.MaxResponseBytes, timeout: p.Timeout, resolver: p.Resolver}
	if g.resolver == nil {
		g.resolver = net.DefaultResolver
	}
	for i, entry := range p.Allow {
		r, err := parseRule(entry)
		if err != nil {
			return nil, fmt.Errorf("egress: allow entry %d (%q): %w", i, entry, err)
		}
		g.rules = append(g.rules, r)
	}
	switch {
	case g.maxBody < 0:
		return nil, fmt.Errorf("egress: max response bytes is %d: want 0 (default %d) or more", g.maxBody, DefaultMaxResponseBytes)
	case g.maxBody == 0:
		g.maxBody = DefaultMaxResponseBytes
	}
	switch {
	case g.timeout < 0:
		return nil, fmt.Errorf("egress: timeout is %s: want 0 (default %s) or more", g.timeout, DefaultTimeout)
	case g.timeout == 0:
		g.timeout = DefaultTimeout
	}
	g.dialer = &net.Dialer{
		Timeout:        g.timeout,
		KeepAlive:      30 * time.Second,
		Resolver:       g.resolver,
		ControlContext: g.control,
	}
	// The run's trace continues at the API a tool or node calls (W3C
	// traceparent; internal/tracing, a pass-through while tracing is off).
	g.transport = tracing.Transport(&limitTransport{
		max: g.maxBody,
		next: &http.Transport{
			// A proxy would make the proxy's address the one dialed and
			// checked, and the proxy would reach the private network
			// for us.
			Proxy:                 nil,
			DialContext:           g.DialContext,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          100,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   10 * time.Second,
			ExpectContinueTimeout: time.Second,
		},
	})
	return g, nil
}

// dialHostKey is the context key of the host name being dialed.
type dialHostKey struct{}

// DialContext connects to addr ("host:port") only where the policy allows:
// the check runs on each address the host resolves to, just before it is
// connected to, so a DNS answer that changes between a check and the
// connection (DNS rebinding) cannot get around it. It is the dialer of
// Client's transport; give it to any other transport or proxy that must
// follow the policy. Refusals wrap ErrBlocked.
func (g *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	// The host name as written in the URL, for host-name allow entries:
	// the control function sees only the IP.
	host, _, _ := net.SplitHostPort(addr)
	ctx = context.WithValue(ctx, dialHostKey{}, normalizeHost(host))
	return g.dialer.DialContext(ctx, network, addr)
}

// Client returns an HTTP client that connects only where the policy allows,
// checked on the address actually dialed, for the first request and every
// redirect (at most MaxRedirects). It ignores HTTP_PROXY and friends, times
// out after the policy's Timeout and fails reading a body past
// MaxResponseBytes with ErrTooLarge.
func (g *Guard) Client() *http.Client {
	return &http.Client{
		Transport: g.transport,
		Timeout:   g.timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > MaxRedirects {
				return fmt.Errorf("egress: stopped after %d redirects", MaxRedirects)
			}
			return g.CheckURL(req.URL.String())
		},
	}
}

// MaxResponseBytes returns the policy's response body limit, for ReadBody.
func (g *Guard) MaxResponseBytes() int64 { return g.maxBody }

// CheckURL refuses, before any request is made, a URL the policy would
// refuse at dial time for reasons visible in the URL itself: a scheme other
// than http or https, a missing host, a literal blocked IP, or "localhost".
// Host names are resolved only by the Client, so passing CheckURL does not
// mean the request will be allowed.
func (g *Guard) CheckURL(rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("egress: parse URL: %w", err)
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return fmt.Errorf("egress: URL scheme %q not allowed, use http or https: %w", u.Scheme, ErrBlocked)
	}
	host := u.Hostname()
	if host == "" {
		return fmt.Errorf("egress: URL %q has no host: %w", u.Redacted(), ErrBlocked)
	}
	port := uint16(80)
	if scheme == "https" {
		port = 443
	}
	if p := u.Port(); p != "" {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil {
			return fmt.Errorf("egress: URL port %q is not a number from 0 to 65535", p)
		}
		port = uint16(n)
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		return g.check(host, addr, port)
	}
	host = normalizeHost(host)
	// RFC 6761: these names always mean this machine; say so now rather
	// than after a DNS lookup.
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		if !g.allowHost(host, port) {
			return &BlockedError{Host: host, Reason: "loopback host name"}
		}
	}
	return nil
}

// control runs just before each connect(2), on the resolved address: the
// check DNS answers cannot get around.
func (g *Guard) control(ctx context.Context, network, address string, _ syscall.RawConn) error {
	host, _ := ctx.Value(dialHostKey{}).(string)
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("egress: dialing %q: %w", address, err)
	}
	if network != "tcp4" && network != "tcp6" {
		return fmt.Errorf("egress: network %q not allowed: %w", network, ErrBlocked)
	}
	if host == "" {
		host = ap.Addr().String()
	}
	return g.check(host, ap.Addr(), ap.Port())
}

// check refuses addr unless it is public or allow-listed by address or by
// the host name it was reached through.
func (g *Guard) check(host string, addr netip.Addr, port uint16) error {
	reason := blockedReason(addr)
	if reason == "" || g.allowHost(host, port) {
		return nil
	}
	plain := addr.WithZone("").Unmap()
	for _, r := range g.rules {
		if r.matchAddr(plain, port) {
			return nil
		}
	}
	return &BlockedError{Host: host, Addr: addr, Reason: reason}
}

func (g *Guard) allowHost(host string, port uint16) bool {
	for _, r := range g.rules {
		if r.matchHost(host, port) {
			return true
		}
	}
	return false
}

// BlockedError is the refusal of a destination address. It wraps
// ErrBlocked.
type BlockedError struct {
	// Host is the host as written in the URL: a name or an IP literal.
	Host string
	// Addr is the address refused; zero when the host name alone was
	// refused, before resolution.
	Addr netip.Addr
	// Reason says what kind of address it is, e.g. "loopback address".
	Reason string
}

func (e *BlockedError) Error() string {
	target, fix := strconv.Quote(e.Host), strconv.Quote(e.Host)
	if e.Addr.IsValid() && e.Addr.String() != e.Host {
		target = fmt.Sprintf("%q (%s)", e.Host, e.Addr)
		fix = fmt.Sprintf("%q or %q", e.Host, e.Addr.WithZone("").Unmap())
	}
	return fmt.Sprintf("egress: refusing to connect to %s: %s; if it is meant to be reachable, add %s to the egress allow list",
		target, e.Reason, fix)
}

// Unwrap makes errors.Is(err, ErrBlocked) true.
func (e *BlockedError) Unwrap() error { return ErrBlocked }
