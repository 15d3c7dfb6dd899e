package egress

import (
	"context"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// CheckResolved refuses rawURL unless the policy allows every address its
// host resolves to (a literal IP is checked as it is). It does what the
// dialer does, ahead of time, for callers that do not dial themselves and
// must decide per request — a headless browser's request interception —
// and it adds CheckURL's refusals of schemes and loopback names.
//
// Passing it does not pin an address: whoever connects later resolves the
// name again, and a DNS answer can change in between. Callers that connect
// must still connect through Client or DialContext, whose check runs on
// the address actually dialed.
func (g *Guard) CheckResolved(ctx context.Context, rawURL string) error {
	if err := g.CheckURL(rawURL); err != nil {
		return err
	}
	u, _ := url.Parse(rawURL) // CheckURL parsed it
	host := u.Hostname()
	port := uint16(80)
	if strings.EqualFold(u.Scheme, "https") {
		port = 443
	}
	if p := u.Port(); p != "" {
		n, _ := strconv.ParseUint(p, 10, 16) // CheckURL checked it
		port = uint16(n)
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return nil // CheckURL checked the literal
	}
	name := normalizeHost(host)
	if g.allowHost(name, port) {
		// A host-name entry trusts whatever the name resolves to, as the
		// dialer does.
		return nil
	}
	addrs, err := g.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return fmt.Errorf("egress: look up %q: %w", host, err)
	}
	if len(addrs) == 0 {
		return fmt.Errorf("egress: look up %q: no addresses", host)
	}
	for _, a := range addrs {
		if err := g.check(name, a, port); err != nil {
			return err
		}
	}
	return nil
}
