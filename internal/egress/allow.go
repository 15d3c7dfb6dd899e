package egress

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// rule is one parsed allow-list entry: either a prefix (an IP is a /32 or
// /128) or a host name, optionally restricted to one port.
type rule struct {
	prefix netip.Prefix // valid for IP and CIDR entries
	host   string       // lower-case host name without trailing dot; "*.x" matches subdomains of x
	port   uint16       // 0 means any port
}

// parseRule parses one allow-list entry: "10.0.0.0/8", "127.0.0.1",
// "[::1]:8080", "internal.example.com", "*.corp.example", "localhost:8080".
func parseRule(entry string) (rule, error) {
	s := strings.TrimSpace(entry)
	switch {
	case s == "":
		return rule{}, errors.New("empty entry")
	case strings.Contains(s, "://"):
		return rule{}, errors.New("want a host, IP or CIDR, not a URL: drop the scheme and path")
	case strings.ContainsAny(s, "/"):
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return rule{}, fmt.Errorf("not a valid CIDR (want e.g. 10.0.0.0/8): %w", err)
		}
		if p != p.Masked() {
			return rule{}, fmt.Errorf("CIDR has bits set beyond the prefix length: write %s", p.Masked())
		}
		return rule{prefix: unmapPrefix(p)}, nil
	}
	bare := s
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		bare = s[1 : len(s)-1] // "[::1]"
	}
	if a, err := netip.ParseAddr(bare); err == nil {
		return addrRule(a, 0)
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		if ap.Port() == 0 {
			return rule{}, errors.New("port 0 is not a port: drop it or give the real one")
		}
		return addrRule(ap.Addr(), ap.Port())
	}
	host, port := s, uint16(0)
	if strings.Contains(s, ":") {
		h, p, err := net.SplitHostPort(s)
		if err != nil {
			return rule{}, fmt.Errorf("want host, host:port, IP or CIDR: %w", err)
		}
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil || n == 0 {
			return rule{}, fmt.Errorf("port %q is not a number from 1 to 65535", p)
		}
		host, port = h, uint16(n)
		if _, err := netip.ParseAddr(host); err == nil {
			return rule{}, fmt.Errorf("%q is not a valid IP:port", s)
		}
	}
	host = normalizeHost(host)
	if a, err := netip.ParseAddr(host); err == nil {
		// "10.0.0.1." is the address, written as a name; a host rule
		// would never match, because dialed IPs are matched as addresses.
		return addrRule(a, port)
	}
	name, wildcard := strings.CutPrefix(host, "*.")
	if err := checkHostName(name); err != nil {
		return rule{}, err
	}
	if wildcard && !strings.Contains(name, ".") {
		return rule{}, fmt.Errorf("wildcard %q is too broad: name at least two labels, e.g. *.corp.example", host)
	}
	return rule{host: host, port: port}, nil
}

func addrRule(a netip.Addr, port uint16) (rule, error) {
	if a.Zone() != "" {
		return rule{}, errors.New("IP addresses with a zone cannot be allow-listed")
	}
	a = a.Unmap()
	return rule{prefix: netip.PrefixFrom(a, a.BitLen()), port: port}, nil
}

// unmapPrefix turns ::ffff:10.0.0.0/104 into 10.0.0.0/8, the form dialed
// addresses are compared in.
func unmapPrefix(p netip.Prefix) netip.Prefix {
	if p.Addr().Is4In6() && p.Bits() >= 96 {
		return netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
	}
	return p
}

// normalizeHost lower-cases a host name and drops the trailing dot of a
// fully qualified name, so that "LocalHost." and "localhost" compare equal.
func normalizeHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

// checkHostName accepts DNS names (letters, digits, '-' and '_' in labels of
// 1 to 63 bytes, 253 bytes in all).
func checkHostName(name string) error {
	if name == "" || len(name) > 253 {
		return fmt.Errorf("%q is not a host name", name)
	}
	for label := range strings.SplitSeq(name, ".") {
		if label == "" || len(label) > 63 {
			return fmt.Errorf("%q is not a host name: empty or over-long label", name)
		}
		for _, c := range []byte(label) {
			ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_'
			if !ok {
				return fmt.Errorf("%q is not a host name: invalid character %q", name, c)
			}
		}
	}
	return nil
}

// String formats the rule as an allow-list entry that parses back to it.
func (r rule) String() string {
	var s string
	switch {
	case r.host != "":
		s = r.host
	case r.prefix.IsSingleIP():
		s = r.prefix.Addr().String()
	default:
		return r.prefix.String()
	}
	if r.port == 0 {
		return s
	}
	return net.JoinHostPort(s, strconv.Itoa(int(r.port)))
}

// matchAddr reports whether the rule allows connecting to addr:port.
func (r rule) matchAddr(addr netip.Addr, port uint16) bool {
	return r.prefix.IsValid() && r.prefix.Contains(addr) && (r.port == 0 || r.port == port)
}

// matchHost reports whether the rule allows connecting to the normalized
// host name host on port.
func (r rule) matchHost(host string, port uint16) bool {
	if r.host == "" || (r.port != 0 && r.port != port) {
		return false
	}
	if suffix, ok := strings.CutPrefix(r.host, "*"); ok {
		return strings.HasSuffix(host, suffix) && len(host) > len(suffix)
	}
	return host == r.host
}
