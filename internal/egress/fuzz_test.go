package egress

import (
	"bytes"
	"crypto/hmac"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzParseRule feeds arbitrary allow-list entries to the parser. It must
// never panic, and an accepted entry must print as an entry that parses to
// the same rule, so that what the server logs is what it enforces.
func FuzzParseRule(f *testing.F) {
	for _, seed := range []string{
		"127.0.0.1", "10.0.0.0/8", "[::1]:8443", "::ffff:10.0.0.0/104", "localhost:8080",
		"*.corp.example", "Internal.Example.COM.", "http://x", "10.0.0.1/8", "fe80::1%eth0",
		"[::1", "host:0", "a..b", "*.", ":80", "[]:80", "1.2.3.4:99999", "::/0", "0.0.0.0/0",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, entry string) {
		r, err := parseRule(entry)
		if err != nil {
			return
		}
		again, err := parseRule(r.String())
		if err != nil {
			t.Fatalf("parseRule(%q) = %s, which does not parse: %v", entry, r, err)
		}
		if again != r {
			t.Fatalf("parseRule(%q) = %s, which parses to %s", entry, r, again)
		}
		if r.host == "" && !r.prefix.IsValid() {
			t.Fatalf("parseRule(%q) = a rule matching nothing", entry)
		}
	})
}

// FuzzVerify feeds arbitrary headers and bodies to Verify. It must never
// panic, fail only with its two sentinels, and accept a header only if one
// of its v1 values is the true signature; a header made by Sign must verify.
func FuzzVerify(f *testing.F) {
	now := time.Unix(1_767_225_600, 0)
	secret := []byte("whsec_fuzz")
	f.Add(Sign(secret, now, []byte("{}")), []byte("{}"))
	f.Add("t=1767225600,v1=00,v1=zz,v0=1", []byte("x"))
	f.Add("t=-9223372036854775808,v1=", []byte(""))
	f.Add("t=9223372036854775807", []byte(""))
	f.Add(",,=,t=", []byte(nil))
	f.Fuzz(func(t *testing.T, header string, body []byte) {
		err := Verify(secret, header, body, time.Minute, now)
		if err != nil && !errors.Is(err, ErrInvalidSignature) && !errors.Is(err, ErrSignatureExpired) {
			t.Fatalf("Verify(%q) = %v, not one of the sentinels", header, err)
		}
		if err == nil {
			// Recompute what must have matched, independently of Verify's
			// own bookkeeping.
			var ts, sigs []string
			for part := range strings.SplitSeq(header, ",") {
				k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
				switch k {
				case "t":
					ts = append(ts, v)
				case "v1":
					sigs = append(sigs, v)
				}
			}
			if len(ts) != 1 {
				t.Fatalf("Verify accepted %q with %d timestamps", header, len(ts))
			}
			n, perr := strconv.ParseInt(ts[0], 10, 64)
			if perr != nil || n < now.Unix()-60 || n > now.Unix()+60 {
				t.Fatalf("Verify accepted %q with timestamp %q", header, ts[0])
			}
			want := mac(secret, n, body)
			found := false
			for _, v := range sigs {
				if b, _ := hex.DecodeString(v); hmac.Equal(b, want) {
					found = true
				}
			}
			if !found {
				t.Fatalf("Verify accepted %q without its true signature", header)
			}
		}
		signed := Sign(secret, now, body)
		if err := Verify(secret, signed, body, time.Minute, now); err != nil {
			t.Fatalf("Verify(Sign(body)) = %v", err)
		}
		if err := Verify(secret, signed, append(bytes.Clone(body), 'x'), time.Minute, now); !errors.Is(err, ErrInvalidSignature) {
			t.Fatalf("Verify of a longer body = %v, want ErrInvalidSignature", err)
		}
	})
}
