package pii

import (
	"strings"
	"testing"
)

func FuzzScan(f *testing.F) {
	f.Add(tenKindsText)
	f.Add("〒100-0001 東京都 電話03-1234-5678 身分證A123456789")
	f.Add("postgres://u:p@h/ fe80::1 ::ffff:1.2.3.4 00:1a:2b:3c:4d:5e a@b.co")
	f.Add("\xff\xfe4111 1111 1111 1111\xe3\x80")
	f.Add("")
	s := newScanner(f, &Options{Threshold: 0.01})
	f.Fuzz(func(t *testing.T, text string) {
		// Rune boundaries as a decoder sees them: an invalid byte is a
		// one-byte rune of its own.
		boundary := map[int]bool{len(text): true}
		for i := range text {
			boundary[i] = true
		}
		last := 0
		for _, e := range s.Scan(text) {
			if e.Start < last || e.Start >= e.End || e.End > len(text) {
				t.Fatalf("entity %+v out of order or bounds (len %d, previous end %d)", e, len(text), last)
			}
			if !boundary[e.Start] || !boundary[e.End] {
				t.Fatalf("entity %+v not on rune boundaries in %q", e, text)
			}
			if e.Score <= 0 || e.Score > 1 {
				t.Fatalf("entity %+v score out of (0, 1]", e)
			}
			last = e.End
		}
	})
}

func FuzzStreamRestorer(f *testing.F) {
	f.Add("Hi [EMAIL_1], call [PHONE_1] or [PHONE_2]. [x] [", []byte{3, 7, 1, 0, 20})
	f.Add("[[EMAIL_1]][EMAIL_1[EMAIL_1]", []byte{1, 1, 1, 1, 1, 1, 1, 1})
	f.Add("no tokens at all", []byte{})
	v := NewVault()
	v.Token("EMAIL", "a@example.com")
	v.Token("PHONE", "090-1234-5678")
	v.Token("PHONE", "[PHONE_1]") // a value that looks like a token is not restored twice
	f.Fuzz(func(t *testing.T, text string, cuts []byte) {
		r := NewStreamRestorer(v)
		var b strings.Builder
		rest := text
		for _, c := range cuts {
			n := min(int(c), len(rest))
			b.WriteString(r.Write(rest[:n]))
			rest = rest[n:]
		}
		b.WriteString(r.Write(rest))
		b.WriteString(r.Flush())
		if want := Restore(v, text); b.String() != want {
			t.Fatalf("chunked restore of %q with cuts %v = %q, want %q", text, cuts, b.String(), want)
		}
	})
}
