package egress

import (
	"net/netip"
	"testing"
)

func TestBlockedReason(t *testing.T) {
	blocked := []string{
		"127.0.0.1", "127.255.255.254", "::1",
		"10.0.0.1", "172.16.0.1", "172.31.255.255", "192.168.1.1", "fc00::1", "fd12:3456::1",
		"169.254.169.254", "169.254.0.1", "fe80::1", "fe80::1%eth0",
		"0.0.0.0", "0.1.2.3", "::",
		"100.64.0.1", "100.127.255.255",
		"224.0.0.1", "239.255.255.250", "ff02::1", "ff05::2",
		"255.255.255.255", "240.0.0.1",
		"192.0.2.1", "198.51.100.7", "203.0.113.9", "198.18.0.1", "2001:db8::1",
		// IPv4-mapped forms.
		"::ffff:127.0.0.1", "::ffff:10.1.2.3", "::ffff:169.254.169.254", "::ffff:0.0.0.0",
		// IPv4-compatible (deprecated).
		"::127.0.0.1", "::8.8.8.8",
		// NAT64, 6to4, Teredo and SIIT embeddings of blocked IPv4.
		"64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe", "64:ff9b:1::1",
		"2002:7f00:1::1", "2002:a00:1::", "2002:a9fe:a9fe::1",
		"2001:0:4136:e378:8000:63bf:80ff:fffe", // client 127.0.0.1
		"::ffff:0:7f00:1",
		// Reserved IPv6 outside 2000::/3, and deprecated site-local.
		"4000::1", "fec0::1", "100::1",
	}
	for _, s := range blocked {
		if r := blockedReason(netip.MustParseAddr(s)); r == "" {
			t.Errorf("blockedReason(%s) = \"\", want it blocked", s)
		}
	}
	public := []string{
		"8.8.8.8", "1.1.1.1", "93.184.216.34", "172.15.255.255", "172.32.0.1",
		"100.63.255.255", "100.128.0.0", "169.253.255.255", "11.0.0.1", "223.255.255.255",
		"2606:4700:4700::1111", "2a00:1450:4001:80b::200e",
		"::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1",
		"2001:0:4136:e378:8000:63bf:f7f7:f7f7", // Teredo, client 8.8.8.8
	}
	for _, s := range public {
		if r := blockedReason(netip.MustParseAddr(s)); r != "" {
			t.Errorf("blockedReason(%s) = %q, want it allowed", s, r)
		}
	}
	if r := blockedReason(netip.Addr{}); r == "" {
		t.Error("blockedReason(zero Addr) = \"\", want it blocked")
	}
}
