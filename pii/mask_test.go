package pii

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func newMasker(t testing.TB, opts *MaskerOptions) *Masker {
	t.Helper()
	m, err := NewMasker(newScanner(t, nil), opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// tenKinds holds ten kinds of personal data in one mixed-language prompt.
var tenKinds = []string{
	"taro.yamada@example.co.jp", // email
	"090-1234-5678",             // JP mobile
	"192.168.10.20",             // IPv4
	"4111 1111 1111 1111",       // card
	"GB82 WEST 1234 5698 7654 32",
	"A123456789",     // TW national ID
	"1234 5678 9018", // My Number
	"900101-1234568", // KR RRN
	"123-45-6789",    // US SSN
	"943 476 5919",   // NHS number
}

const tenKindsText = "Hello, I'm Taro (taro.yamada@example.co.jp). 携帯は090-1234-5678です。" +
	"My laptop is at 192.168.10.20; card 4111 1111 1111 1111, IBAN GB82 WEST 1234 5698 7654 32. " +
	"身分證字號A123456789。マイナンバー 1234 5678 9018。주민등록번호 900101-1234568. " +
	"SSN 123-45-6789, NHS number 943 476 5919. Again: taro.yamada@example.co.jp"

func TestMaskRoundTrip(t *testing.T) {
	m := newMasker(t, nil)
	masked, ents := m.Mask(tenKindsText)
	for _, v := range tenKinds {
		if strings.Contains(masked, v) {
			t.Errorf("masked text still contains %q:\n%s", v, masked)
		}
	}
	if len(ents) != 11 {
		t.Errorf("Mask found %d entities, want 11 (ten values, the email twice):\n%s", len(ents), masked)
	}
	// The repeated email gets the same token.
	if n := strings.Count(masked, "[EMAIL_1]"); n != 2 {
		t.Errorf("[EMAIL_1] occurs %d times, want 2:\n%s", n, masked)
	}
	if got := m.Restore(masked); got != tenKindsText {
		t.Errorf("Restore(Mask(text)) =\n%s\nwant\n%s", got, tenKindsText)
	}
}

func TestMaskTokensPerConversation(t *testing.T) {
	m := newMasker(t, nil)
	a, _ := m.Mask("mail a@example.com and b@example.com")
	b, _ := m.Mask("again b@example.com")
	if a != "mail [EMAIL_1] and [EMAIL_2]" || b != "again [EMAIL_2]" {
		t.Errorf("first conversation: %q, %q", a, b)
	}
	other, _ := newMasker(t, nil).Mask("again b@example.com")
	if other != "again [EMAIL_1]" {
		t.Errorf("a new conversation starts numbering again: got %q", other)
	}
}

func TestRestoreLeavesUnknownTokens(t *testing.T) {
	m := newMasker(t, nil)
	m.Mask("a@example.com")
	const in = "[EMAIL_1] [EMAIL_2] [email_1] [EMAIL_1"
	if got, want := m.Restore(in), "a@example.com [EMAIL_2] [email_1] [EMAIL_1"; got != want {
		t.Errorf("Restore(%q) = %q, want %q", in, got, want)
	}
}

func TestIrreversible(t *testing.T) {
	v := NewVault()
	m := newMasker(t, &MaskerOptions{Mode: Irreversible, Vault: v})
	masked, ents := m.Mask("SSN 123-45-6789 and mail a@example.com")
	if want := "SSN *** and mail ***"; masked != want {
		t.Errorf("Mask = %q, want %q", masked, want)
	}
	if len(ents) != 2 {
		t.Errorf("%d entities, want 2", len(ents))
	}
	if v.Len() != 0 {
		t.Errorf("irreversible mode stored %d values", v.Len())
	}
	if got := m.Restore(masked); got != masked {
		t.Errorf("Restore changed irreversible text: %q", got)
	}
}

func TestNewMaskerErrors(t *testing.T) {
	if _, err := NewMasker(nil, nil); err == nil {
		t.Error("NewMasker(nil) succeeded")
	}
	if _, err := NewMasker(newScanner(t, nil), &MaskerOptions{Mode: 7}); err == nil {
		t.Error("NewMasker with Mode 7 succeeded")
	}
}

// badDetector breaks the Detector contract: overlapping and out-of-range
// entities must not make Mask panic.
type badDetector struct{}

func (badDetector) Scan(text string) []Entity {
	return []Entity{{Type: "x y", Start: 0, End: 3}, {Type: "EMAIL", Start: 1, End: 2}, {Type: "EMAIL", Start: 2, End: 1000}}
}

func TestMaskToleratesBadDetector(t *testing.T) {
	m, err := NewMasker(badDetector{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	masked, _ := m.Mask("abcdef")
	if masked != "[X_Y_1]def" {
		t.Errorf("Mask = %q", masked)
	}
	if got := m.Restore(masked); got != "abcdef" {
		t.Errorf("Restore = %q", got)
	}
}

// TestStreamRestorerSplits cuts the reply at every byte position: the two
// outputs must add up to the restored reply, the first must never contain a
// piece of a token, and text before a possible token must not be delayed.
func TestStreamRestorerSplits(t *testing.T) {
	m := newMasker(t, nil)
	m.Mask("a@example.com 090-1234-5678")
	const reply = "了解です、[EMAIL_1]に送ります [x] and call [PHONE_1]. [NOT_A_TOKEN] end ["
	want := m.Restore(reply)
	if !strings.Contains(want, "a@example.com") || !strings.Contains(want, "090-1234-5678") {
		t.Fatalf("Restore(%q) = %q; test setup is wrong", reply, want)
	}
	for i := 0; i <= len(reply); i++ {
		r := NewStreamRestorer(m.Vault())
		first := r.Write(reply[:i])
		second := r.Write(reply[i:])
		last := r.Flush()
		if got := first + second + last; got != want {
			t.Errorf("split at %d: got %q, want %q", i, got, want)
		}
		if strings.Contains(first, "[EMA") || strings.Contains(first, "[PHO") {
			t.Errorf("split at %d: first output %q has an unrestored token piece", i, first)
		}
		// Held back only from an open '[' that can still become a token.
		held := reply[:i]
		if j := strings.LastIndexByte(held, '['); j >= 0 && partialToken(held[j:]) {
			held = held[:j]
		}
		if wantFirst := m.Restore(held); first != wantFirst {
			t.Errorf("split at %d: first output %q, want %q", i, first, wantFirst)
		}
	}
}

func TestStreamRestorerByteByByte(t *testing.T) {
	m := newMasker(t, nil)
	masked, _ := m.Mask(tenKindsText)
	r := NewStreamRestorer(m.Vault())
	var b strings.Builder
	for i := 0; i < len(masked); i++ {
		b.WriteString(r.Write(masked[i : i+1]))
	}
	b.WriteString(r.Flush())
	if b.String() != tenKindsText {
		t.Errorf("byte-by-byte restore =\n%s\nwant\n%s", b.String(), tenKindsText)
	}
}

// A held-back prefix is released once it can no longer be a token, even
// without Flush, and a '[' that opens no token is never held.
func TestStreamRestorerReleases(t *testing.T) {
	r := NewStreamRestorer(NewVault())
	for _, tt := range []struct{ in, want string }{
		{"a [b", "a [b"},
		{" [EMA", " "},
		{"IL", ""},
		{"x", "[EMAILx"},
		{"[" + strings.Repeat("A", maxTokenLen), "[" + strings.Repeat("A", maxTokenLen)},
	} {
		if got := r.Write(tt.in); got != tt.want {
			t.Errorf("Write(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestAuditLine(t *testing.T) {
	s := newScanner(t, nil)
	const text = "mail a@example.com, 手機0912-345-678, b@example.com"
	ents := s.Scan(text)
	line := AuditLine("input", ents)
	if want := "[PII] direction=input entities=[Global.Email:2, TW.Phone:1] count=3"; line != want {
		t.Errorf("AuditLine = %q, want %q", line, want)
	}
	for _, v := range []string{"a@example.com", "b@example.com", "0912-345-678", "example"} {
		if strings.Contains(line, v) {
			t.Errorf("audit line %q contains the value %q", line, v)
		}
	}
	if got := AuditLine("output\n[PII] forged", nil); got != "[PII] direction=output_______forged entities=[] count=0" {
		t.Errorf("AuditLine with a forged direction = %q", got)
	}
}

// A vault that ends up in a log or an error message must not leak values.
func TestVaultDoesNotPrintValues(t *testing.T) {
	v := NewVault()
	v.Token("EMAIL", "secret@example.com")
	var b strings.Builder
	slog.New(slog.NewTextHandler(&b, nil)).Info("masked", "vault", v)
	b.WriteString(fmt.Sprint(v) + fmt.Sprintf("%v %s %+v %#v", v, v, v, v))
	if strings.Contains(b.String(), "secret") {
		t.Errorf("vault printed its value: %s", b.String())
	}
	if !strings.Contains(b.String(), "values=1") {
		t.Errorf("log line %q does not show the vault size", b.String())
	}
}
