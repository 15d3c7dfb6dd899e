package egress

import (
	"fmt"
	"net/netip"
)

// blockedRange is a range of addresses that an unlisted destination may not
// be in, with the reason shown to the user.
type blockedRange struct {
	prefix netip.Prefix
	reason string
}

// blockedRanges lists the special-purpose ranges of the IANA IPv4 and IPv6
// registries that reach something other than the public internet. The first
// match gives the reason, so more specific ranges come first.
var blockedRanges = func() []blockedRange {
	metadata := "link-local address (169.254.0.0/16, which includes the cloud metadata service 169.254.169.254)"
	ranges := []struct{ cidr, reason string }{
		// IPv4.
		{"0.0.0.0/32", "unspecified address"},
		{"0.0.0.0/8", `"this network" address (0.0.0.0/8)`},
		{"10.0.0.0/8", "private address (10.0.0.0/8)"},
		{"100.64.0.0/10", "carrier-grade NAT address (100.64.0.0/10)"},
		{"127.0.0.0/8", "loopback address"},
		{"169.254.0.0/16", metadata},
		{"172.16.0.0/12", "private address (172.16.0.0/12)"},
		{"192.0.0.0/24", "IETF protocol assignment (192.0.0.0/24)"},
		{"192.0.2.0/24", "documentation address (192.0.2.0/24)"},
		{"192.88.99.0/24", "6to4 relay anycast address (192.88.99.0/24)"},
		{"192.168.0.0/16", "private address (192.168.0.0/16)"},
		{"198.18.0.0/15", "benchmarking address (198.18.0.0/15)"},
		{"198.51.100.0/24", "documentation address (198.51.100.0/24)"},
		{"203.0.113.0/24", "documentation address (203.0.113.0/24)"},
		{"224.0.0.0/4", "multicast address"},
		{"255.255.255.255/32", "broadcast address"},
		{"240.0.0.0/4", "reserved address (240.0.0.0/4)"},

		// IPv6. IPv4-mapped addresses (::ffff:0:0/96) never get here: they
		// are unmapped and checked as IPv4 first.
		{"::/128", "unspecified address"},
		{"::1/128", "loopback address"},
		{"::/96", "IPv4-compatible IPv6 address (deprecated, ::/96)"},
		{"64:ff9b:1::/48", "local-use NAT64 address (64:ff9b:1::/48)"},
		{"100::/64", "discard-only address (100::/64)"},
		{"2001:2::/48", "benchmarking address (2001:2::/48)"},
		{"2001:10::/28", "ORCHID address (2001:10::/28)"},
		{"2001:20::/28", "ORCHIDv2 address (2001:20::/28)"},
		{"2001:db8::/32", "documentation address (2001:db8::/32)"},
		{"3fff::/20", "documentation address (3fff::/20)"},
		{"fc00::/7", "unique local (private) address (fc00::/7)"},
		{"fe80::/10", "link-local address (fe80::/10)"},
		{"fec0::/10", "site-local address (deprecated, fec0::/10)"},
		{"ff00::/8", "multicast address"},
	}
	out := make([]blockedRange, len(ranges))
	for i, r := range ranges {
		out[i] = blockedRange{netip.MustParsePrefix(r.cidr), r.reason}
	}
	return out
}()

var (
	// nat64 is the well-known NAT64 prefix (RFC 6052): the last 32 bits are
	// the IPv4 destination the translator connects to.
	nat64 = netip.MustParsePrefix("64:ff9b::/96")
	// siit is the IPv4-translated prefix (RFC 2765), ::ffff:0:a.b.c.d.
	siit = netip.MustParsePrefix("::ffff:0:0:0/96")
	// sixToFour embeds the IPv4 address of the 6to4 router in bits 16–48.
	sixToFour = netip.MustParsePrefix("2002::/16")
	// teredo embeds the client's IPv4 address, bit-inverted, in the last
	// 32 bits.
	teredo = netip.MustParsePrefix("2001::/32")
	// globalUnicast is where every public IPv6 address lives; anything
	// outside it (other than NAT64) is reserved or local.
	globalUnicast = netip.MustParsePrefix("2000::/3")
)

// blockedReason reports why a connection to addr must be refused unless it
// is allow-listed, or "" if addr is a public address.
func blockedReason(addr netip.Addr) string {
	if !addr.IsValid() {
		return "invalid address"
	}
	// A zone only selects the interface; the address decides what is
	// reached. ::ffff:127.0.0.1 is 127.0.0.1 on a dual-stack socket.
	addr = addr.WithZone("").Unmap()
	for _, r := range blockedRanges {
		if r.prefix.Contains(addr) {
			return r.reason
		}
	}
	if addr.Is4() {
		return ""
	}
	b := addr.As16()
	embedded := func(kind string, v4 [4]byte) string {
		inner := netip.AddrFrom4(v4)
		if reason := blockedReason(inner); reason != "" {
			return fmt.Sprintf("%s embedding %s, a %s", kind, inner, reason)
		}
		return ""
	}
	switch {
	case nat64.Contains(addr):
		return embedded("NAT64 address", [4]byte{b[12], b[13], b[14], b[15]})
	case siit.Contains(addr):
		return embedded("IPv4-translated address", [4]byte{b[12], b[13], b[14], b[15]})
	case sixToFour.Contains(addr):
		return embedded("6to4 address", [4]byte{b[2], b[3], b[4], b[5]})
	case teredo.Contains(addr):
		return embedded("Teredo address", [4]byte{^b[12], ^b[13], ^b[14], ^b[15]})
	case !globalUnicast.Contains(addr):
		return "reserved IPv6 address (outside 2000::/3)"
	}
	return ""
}
