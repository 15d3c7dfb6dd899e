// Package egresstest answers DNS for tests of code that follows the
// egress policy: a resolver whose answers the test chooses per name and
// per query, so that a test can make a name resolve to a loopback or
// private address, or change its answer between two lookups (DNS
// rebinding), without a real DNS server. Give the resolver to
// egress.Policy.Resolver.
//
//	r := egresstest.Resolver(t, func(name string, n int) []string {
//		if name == "rebind.test" && n == 1 {
//			return []string{"127.0.0.1"} // allowed
//		}
//		return []string{"127.0.0.2"} // refused
//	})
//	g, err := (&egress.Policy{Resolver: r, Allow: []string{"127.0.0.1"}}).Compile()
package egresstest

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// Resolver serves DNS on a UDP port of 127.0.0.1 until the test ends and
// returns a resolver that asks it. answer gets the name (without the
// trailing dot) and n, how many queries of that type (A or AAAA) the name
// has had, this one included; it returns addresses, of which each query
// gets those of its type. A nil answer is NXDOMAIN.
func Resolver(t testing.TB, answer func(name string, n int) []string) *net.Resolver {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("egresstest: listen: %v", err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { pc.Close(); wg.Wait() })
	counts := map[string]int{} // by type and name; only the serving goroutine uses it
	wg.Go(func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			out, ok := respond(buf[:n], counts, answer)
			if ok {
				_, _ = pc.WriteTo(out, from)
			}
		}
	})
	addr := pc.LocalAddr().String()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", addr)
	}}
}

// respond answers one query message.
func respond(query []byte, counts map[string]int, answer func(string, int) []string) ([]byte, bool) {
	var m dnsmessage.Message
	if m.Unpack(query) != nil || len(m.Questions) != 1 {
		return nil, false
	}
	q := m.Questions[0]
	m.Header.Response, m.Header.Authoritative, m.Header.RecursionAvailable = true, true, true
	name := strings.TrimSuffix(q.Name.String(), ".")
	key := q.Type.String() + " " + name
	counts[key]++
	addrs := answer(name, counts[key])
	if addrs == nil {
		m.Header.RCode = dnsmessage.RCodeNameError
	}
	for _, a := range addrs {
		ip, err := netip.ParseAddr(a)
		if err != nil {
			continue
		}
		h := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET}
		switch {
		case ip.Is4() && q.Type == dnsmessage.TypeA:
			h.Type = dnsmessage.TypeA
			m.Answers = append(m.Answers, dnsmessage.Resource{Header: h, Body: &dnsmessage.AResource{A: ip.As4()}})
		case ip.Is6() && q.Type == dnsmessage.TypeAAAA:
			h.Type = dnsmessage.TypeAAAA
			m.Answers = append(m.Answers, dnsmessage.Resource{Header: h, Body: &dnsmessage.AAAAResource{AAAA: ip.As16()}})
		}
	}
	out, err := m.Pack()
	return out, err == nil
}
