package egress

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestSignSplitIsTheOpenSSLForm(t *testing.T) {
	secret, body := []byte("s3cret"), []byte(`{"a":1}`)
	at := time.Unix(1700000000, 0)
	ts, sig := SignSplit(secret, at, body)
	h := hmac.New(sha256.New, secret)
	h.Write([]byte("1700000000." + string(body)))
	if ts != "1700000000" || sig != "sha256="+hex.EncodeToString(h.Sum(nil)) {
		t.Fatalf("SignSplit = %q, %q; want the HMAC-SHA256 of \"<ts>.<body>\"", ts, sig)
	}
	// The v1 value of Sign is the same MAC: one scheme, two layouts.
	if !strings.HasSuffix(Sign(secret, at, body), strings.TrimPrefix(sig, "sha256=")) {
		t.Errorf("Sign and SignSplit disagree on the MAC")
	}
}

func TestVerifySplit(t *testing.T) {
	secret, body, now := []byte("k"), []byte(`{"x":true}`), time.Unix(1800000000, 0)
	ts, sig := SignSplit(secret, now.Add(-time.Minute), body)
	if err := VerifySplit(secret, ts, sig, body, 0, now); err != nil {
		t.Fatalf("VerifySplit(good) = %v", err)
	}
	staleTS, staleSig := SignSplit(secret, now.Add(-6*time.Minute), body)
	futureTS, futureSig := SignSplit(secret, now.Add(6*time.Minute), body)
	for name, c := range map[string]struct {
		ts, sig string
		body    []byte
		secret  []byte
		want    error
	}{
		"other body":     {ts, sig, []byte(`{"x":false}`), secret, ErrInvalidSignature},
		"other secret":   {ts, sig, body, []byte("k2"), ErrInvalidSignature},
		"empty secret":   {ts, sig, body, nil, ErrInvalidSignature},
		"other ts":       {strconv.FormatInt(now.Unix(), 10), sig, body, secret, ErrInvalidSignature},
		"no prefix":      {ts, strings.TrimPrefix(sig, "sha256="), body, secret, ErrInvalidSignature},
		"short hex":      {ts, sig[:20], body, secret, ErrInvalidSignature},
		"no timestamp":   {"", sig, body, secret, ErrInvalidSignature},
		"bad timestamp":  {"yesterday", sig, body, secret, ErrInvalidSignature},
		"plus timestamp": {"+" + ts, sig, body, secret, ErrInvalidSignature},
		"zero padded":    {"0" + ts, sig, body, secret, ErrInvalidSignature},
		"stale":          {staleTS, staleSig, body, secret, ErrSignatureExpired},
		"future":         {futureTS, futureSig, body, secret, ErrSignatureExpired},
	} {
		err := VerifySplit(c.secret, c.ts, c.sig, c.body, 5*time.Minute, now)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: VerifySplit = %v, want %v", name, err, c.want)
		}
	}
}

// FuzzVerifySplit feeds arbitrary header values (the parser of inbound
// webhook signatures): it must never panic, never accept a value that is
// not the MAC of the body, and accept exactly what SignSplit makes.
func FuzzVerifySplit(f *testing.F) {
	secret, now := []byte("fuzz-secret"), time.Unix(1800000000, 0)
	ts, sig := SignSplit(secret, now, []byte("{}"))
	for _, s := range [][3]string{{ts, sig, "{}"}, {"", "", ""}, {"-1", "sha256=", "x"}, {"99999999999999999999", sig, "{}"},
		{ts, "sha256=" + strings.Repeat("zz", 32), "{}"}, {" " + ts + " ", " " + sig, "{}"}, {"-9223372036854775808", sig, ""}} {
		f.Add(s[0], s[1], []byte(s[2]))
	}
	f.Fuzz(func(t *testing.T, ts, sig string, body []byte) {
		err := VerifySplit(secret, ts, sig, body, time.Minute, now)
		if err == nil {
			n, perr := strconv.ParseInt(strings.TrimSpace(ts), 10, 64)
			if perr != nil {
				t.Fatalf("accepted timestamp %q that is not unix seconds", ts)
			}
			_, want := SignSplit(secret, time.Unix(n, 0), body)
			if strings.TrimSpace(sig) != want && !strings.EqualFold(strings.TrimSpace(sig), want) {
				t.Fatalf("accepted signature %q for a body whose MAC is %q", sig, want)
			}
			return
		}
		if !errors.Is(err, ErrInvalidSignature) && !errors.Is(err, ErrSignatureExpired) {
			t.Fatalf("VerifySplit error %v wraps neither sentinel", err)
		}
	})
}
