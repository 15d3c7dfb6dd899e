package egress

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// SignatureHeader is the header that carries a webhook's signature.
const SignatureHeader = "X-AgentCraft-Signature"

// DefaultTolerance is how far Verify lets a signature's timestamp be from
// now when it is given a tolerance of 0.
const DefaultTolerance = 5 * time.Minute

var (
	// ErrInvalidSignature is wrapped by Verify when the header is malformed
	// or no signature in it matches.
	ErrInvalidSignature = errors.New("invalid webhook signature")
	// ErrSignatureExpired is wrapped by Verify when the signature matches
	// but its timestamp is outside the tolerance: a replay, or a clock off.
	ErrSignatureExpired = errors.New("webhook signature timestamp outside tolerance")
)

// Sign returns the SignatureHeader value for a webhook body sent at
// timestamp: "t=<unix seconds>,v1=<hex HMAC-SHA256 of "<unix seconds>.<body>">".
// Signing the timestamp with the body lets the receiver refuse replays.
// An empty secret gives a signature anyone can forge; Verify refuses it.
func Sign(secret []byte, timestamp time.Time, body []byte) string {
	t := timestamp.Unix()
	return "t=" + strconv.FormatInt(t, 10) + ",v1=" + hex.EncodeToString(mac(secret, t, body))
}

func mac(secret []byte, t int64, body []byte) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write(strconv.AppendInt(nil, t, 10))
	h.Write([]byte{'.'})
	h.Write(body)
	return h.Sum(nil)
}

// Verify checks a SignatureHeader value against body: one of its v1
// signatures (there may be several while a secret is rotated) must be the
// HMAC of its timestamp and body under secret, and the timestamp must be
// within tolerance of now (0 means DefaultTolerance). Keys other than t and
// v1 are ignored, so that new schemes can be added alongside.
func Verify(secret []byte, header string, body []byte, tolerance time.Duration, now time.Time) error {
	if len(secret) == 0 {
		return fmt.Errorf("egress: verify signature: empty secret: %w", ErrInvalidSignature)
	}
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	var (
		t      int64
		haveT  bool
		hashes [][]byte
	)
	for part := range strings.SplitSeq(header, ",") {
		key, value, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return fmt.Errorf("egress: verify signature: header part %q is not key=value: %w", part, ErrInvalidSignature)
		}
		switch key {
		case "t":
			if haveT {
				return fmt.Errorf("egress: verify signature: more than one timestamp: %w", ErrInvalidSignature)
			}
			n, err := strconv.ParseInt(value, 10, 64)
			if err != nil {
				return fmt.Errorf("egress: verify signature: timestamp %q is not unix seconds: %w", value, ErrInvalidSignature)
			}
			t, haveT = n, true
		case "v1":
			b, err := hex.DecodeString(value)
			if err != nil || len(b) != sha256.Size {
				continue // not ours to judge: it cannot match anyway
			}
			hashes = append(hashes, b)
		}
	}
	if !haveT {
		return fmt.Errorf("egress: verify signature: no timestamp (t=): %w", ErrInvalidSignature)
	}
	if len(hashes) == 0 {
		return fmt.Errorf("egress: verify signature: no v1 signature: %w", ErrInvalidSignature)
	}
	want := mac(secret, t, body)
	matched := false
	for _, h := range hashes {
		// Check them all: the time taken must not say which one matched.
		if hmac.Equal(h, want) {
			matched = true
		}
	}
	if !matched {
		return fmt.Errorf("egress: verify signature: no v1 signature matches the body: %w", ErrInvalidSignature)
	}
	// Compare in seconds: time.Unix(t, 0) of an absurd t would overflow
	// time.Duration arithmetic.
	n, tol := now.Unix(), int64(tolerance/time.Second)
	if t < n-tol || t > n+tol {
		return fmt.Errorf("egress: verify signature: timestamp %d is %s from now, over the tolerance of %s: %w",
			t, age(t, n), tolerance, ErrSignatureExpired)
	}
	return nil
}

// age formats the distance between two unix times without overflowing.
func age(t, now int64) string {
	d := now - t
	if (t > now) != (d < 0) || d > int64(1<<62)/int64(time.Second) || d < -int64(1<<62)/int64(time.Second) {
		return "too far"
	}
	return (time.Duration(d) * time.Second).Abs().String()
}

// The split form of a webhook signature, for senders that sign with a shell
// one-liner: the timestamp in its own header and the signature as
// "sha256=<hex HMAC-SHA256 of "<unix seconds>.<body>">", the same MAC as
// Sign's v1 value. Inbound webhooks (package trigger) take this form.
const (
	// TimestampHeader carries the unix seconds the body was signed at.
	TimestampHeader = "X-AgentCraft-Timestamp"
	// sha256Prefix starts a split-form signature value.
	sha256Prefix = "sha256="
)

// SignSplit returns the TimestampHeader and SignatureHeader values of the
// split form for body sent at timestamp.
func SignSplit(secret []byte, timestamp time.Time, body []byte) (ts, signature string) {
	t := timestamp.Unix()
	return strconv.FormatInt(t, 10), sha256Prefix + hex.EncodeToString(mac(secret, t, body))
}

// VerifySplit checks a split-form signature: signature must be
// "sha256=<hex>" and equal (compared in constant time) the HMAC of
// "<timestamp>.<body>" under secret; only then is timestamp, unix seconds,
// held to be within tolerance of now (0 means DefaultTolerance), so a
// caller without the secret learns nothing about the clock. Errors wrap
// ErrInvalidSignature (malformed or wrong) or ErrSignatureExpired (right,
// but stale or from the future: a replay).
func VerifySplit(secret []byte, timestamp, signature string, body []byte, tolerance time.Duration, now time.Time) error {
	if len(secret) == 0 {
		return fmt.Errorf("egress: verify signature: empty secret: %w", ErrInvalidSignature)
	}
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	timestamp = strings.TrimSpace(timestamp)
	if timestamp == "" {
		return fmt.Errorf("egress: verify signature: no %s header: %w", TimestampHeader, ErrInvalidSignature)
	}
	t, err := strconv.ParseInt(timestamp, 10, 64)
	// Only the canonical form: the sender signed the text it sent, and the
	// MAC is computed over the canonical text.
	if err != nil || strconv.FormatInt(t, 10) != timestamp {
		return fmt.Errorf("egress: verify signature: %s is not unix seconds: %w", TimestampHeader, ErrInvalidSignature)
	}
	hexSig, ok := strings.CutPrefix(strings.TrimSpace(signature), sha256Prefix)
	if !ok {
		return fmt.Errorf("egress: verify signature: %s must be %q followed by the hex HMAC-SHA256: %w", SignatureHeader, sha256Prefix, ErrInvalidSignature)
	}
	got, err := hex.DecodeString(hexSig)
	if err != nil || len(got) != sha256.Size {
		return fmt.Errorf("egress: verify signature: %s is not 64 hex digits after %q: %w", SignatureHeader, sha256Prefix, ErrInvalidSignature)
	}
	if !hmac.Equal(got, mac(secret, t, body)) {
		return fmt.Errorf("egress: verify signature: the signature does not match the body: %w", ErrInvalidSignature)
	}
	n, tol := now.Unix(), int64(tolerance/time.Second)
	if t < n-tol || t > n+tol {
		return fmt.Errorf("egress: verify signature: timestamp %d is %s from now, over the tolerance of %s: %w",
			t, age(t, n), tolerance, ErrSignatureExpired)
	}
	return nil
}
