package egress

import (
	"net/netip"
	"strings"
	"testing"
)

func TestParseRule(t *testing.T) {
	tests := []struct {
		entry string
		want  string // canonical form
	}{
		{"127.0.0.1", "127.0.0.1"},
		{" 10.0.0.0/8 ", "10.0.0.0/8"},
		{"::1", "::1"},
		{"[::1]", "::1"},
		{"[::1]:8443", "[::1]:8443"},
		{"::ffff:127.0.0.1", "127.0.0.1"},
		{"::ffff:10.0.0.0/104", "10.0.0.0/8"},
		{"fd00::/8", "fd00::/8"},
		{"localhost:8080", "localhost:8080"},
		{"127.0.0.1:8080", "127.0.0.1:8080"},
		{"Internal.Example.COM.", "internal.example.com"},
		{"*.corp.example", "*.corp.example"},
		{"*.corp.example:443", "*.corp.example:443"},
		{"my_host", "my_host"},
		{"10.0.0.1.", "10.0.0.1"},
		{"10.0.0.1.:80", "10.0.0.1:80"},
	}
	for _, tt := range tests {
		r, err := parseRule(tt.entry)
		if err != nil {
			t.Errorf("parseRule(%q): %v", tt.entry, err)
			continue
		}
		if got := r.String(); got != tt.want {
			t.Errorf("parseRule(%q) = %s, want %s", tt.entry, got, tt.want)
		}
	}
}

func TestParseRuleRejects(t *testing.T) {
	for _, entry := range []string{
		"", "  ", "http://example.com", "10.0.0.1/8", "10.0.0.0/33", "10.0.0.0/x",
		"localhost:0", "localhost:65536", "localhost:http", "host:", "[::1",
		"127.0.0.1:0", "fe80::1%eth0", "a..b", "exa mple.com", "*", "*.com", "*.",
		"host/path", "ex@mple.com", strings.Repeat("a", 64) + ".com", "1.2.3.4:99999",
	} {
		if r, err := parseRule(entry); err == nil {
			t.Errorf("parseRule(%q) = %s, want an error", entry, r)
		}
	}
}

func TestRuleMatch(t *testing.T) {
	r := func(s string) rule {
		t.Helper()
		r, err := parseRule(s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	ip := netip.MustParseAddr
	if !r("10.0.0.0/8").matchAddr(ip("10.9.8.7"), 80) || r("10.0.0.0/8").matchAddr(ip("11.0.0.1"), 80) {
		t.Error("10.0.0.0/8 does not match as a CIDR")
	}
	if !r("127.0.0.1:8080").matchAddr(ip("127.0.0.1"), 8080) || r("127.0.0.1:8080").matchAddr(ip("127.0.0.1"), 8081) {
		t.Error("127.0.0.1:8080 does not restrict the port")
	}
	if !r("*.corp.example").matchHost("a.b.corp.example", 1) || r("*.corp.example").matchHost("corp.example", 1) ||
		r("*.corp.example").matchHost("evilcorp.example", 1) {
		t.Error("*.corp.example does not match exactly the subdomains")
	}
	if !r("localhost:8080").matchHost("localhost", 8080) || r("localhost:8080").matchHost("localhost", 80) {
		t.Error("localhost:8080 does not restrict the port")
	}
	if r("localhost").matchAddr(ip("127.0.0.1"), 80) || r("127.0.0.1").matchHost("127.0.0.1", 80) {
		t.Error("host rules and address rules mix")
	}
}
