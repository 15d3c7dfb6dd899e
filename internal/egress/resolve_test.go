package egress_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"

	"github.com/agentcraftlab/agentcraft/internal/egress"
	"github.com/agentcraftlab/agentcraft/internal/egress/egresstest"
)

// fakeDNS answers from a fixed table.
func fakeDNS(t *testing.T, table map[string][]string) *net.Resolver {
	return egresstest.Resolver(t, func(name string, _ int) []string { return table[name] })
}

var dnsTable = map[string][]string{
	"public.test": {"93.184.216.34"},
	"rebind.test": {"127.0.0.1"},
	"mixed.test":  {"93.184.216.34", "10.0.0.7"},
	"cloud.test":  {"169.254.169.254"},
}

func TestCheckResolved(t *testing.T) {
	ctx := context.Background()
	r := fakeDNS(t, dnsTable)
	g := compile(t, egress.Policy{Resolver: r})
	if err := g.CheckResolved(ctx, "https://public.test/page"); err != nil {
		t.Errorf("public.test: %v, want allowed", err)
	}
	for _, u := range []string{
		"http://rebind.test:8080/", // a name resolving to loopback
		"http://mixed.test/",       // one private address among public ones is enough
		"http://cloud.test/latest/meta-data/",
		"http://127.0.0.1/", "http://localhost/", "file:///etc/passwd", // what CheckURL refuses
	} {
		err := g.CheckResolved(ctx, u)
		if !errors.Is(err, egress.ErrBlocked) {
			t.Errorf("CheckResolved(%q) = %v, want ErrBlocked", u, err)
		}
	}
	var be *egress.BlockedError
	if err := g.CheckResolved(ctx, "http://mixed.test/"); !errors.As(err, &be) || be.Addr != netip.MustParseAddr("10.0.0.7") || be.Host != "mixed.test" {
		t.Errorf("mixed.test: %v, want a *BlockedError naming mixed.test (10.0.0.7)", err)
	}
	if err := g.CheckResolved(ctx, "http://nowhere.test/"); err == nil || errors.Is(err, egress.ErrBlocked) {
		t.Errorf("nowhere.test: %v, want a lookup error that is not a refusal", err)
	}

	for _, allow := range []string{"127.0.0.1", "rebind.test", "rebind.test:8080", "127.0.0.0/8"} {
		g := compile(t, egress.Policy{Resolver: r, Allow: []string{allow}})
		if err := g.CheckResolved(ctx, "http://rebind.test:8080/"); err != nil {
			t.Errorf("allow %s: CheckResolved(rebind.test:8080) = %v, want allowed", allow, err)
		}
	}
	g = compile(t, egress.Policy{Resolver: r, Allow: []string{"rebind.test:9"}})
	if err := g.CheckResolved(ctx, "http://rebind.test:8080/"); !errors.Is(err, egress.ErrBlocked) {
		t.Errorf("allow rebind.test:9: CheckResolved(rebind.test:8080) = %v, want ErrBlocked (other port)", err)
	}
}

// TestDialContext: the exported dialer applies the policy to the address
// a name resolves to, as the Client does, so a proxy built on it follows
// the policy too.
func TestDialContext(t *testing.T) {
	s := newServer(t, hello)
	ctx := context.Background()
	r := fakeDNS(t, dnsTable)
	_, err := compile(t, egress.Policy{Resolver: r}).DialContext(ctx, "tcp", "rebind.test:"+s.port())
	var be *egress.BlockedError
	if !errors.As(err, &be) || !be.Addr.IsLoopback() {
		t.Fatalf("DialContext(rebind.test) = %v, want a *BlockedError for a loopback address", err)
	}
	c, err := compile(t, egress.Policy{Resolver: r, Allow: []string{"rebind.test"}}).DialContext(ctx, "tcp", "rebind.test:"+s.port())
	if err != nil {
		t.Fatalf("allow rebind.test: DialContext = %v, want a connection", err)
	}
	c.Close()
	body, err := get(t, compile(t, egress.Policy{Resolver: r, Allow: []string{"rebind.test"}}), "http://rebind.test:"+s.port()+"/")
	if err != nil || body != "hello" {
		t.Errorf("allow rebind.test: Get = %q, %v; want hello (the Client resolves with Policy.Resolver)", body, err)
	}
}
