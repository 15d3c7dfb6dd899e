package egress_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/internal/egress"
)

var (
	secret = []byte("whsec_test")
	sentAt = time.Unix(1_767_225_600, 0)
	body   = []byte(`{"event":"run.completed","run_id":"r1"}`)
)

func TestSignFormat(t *testing.T) {
	// Computed independently, as a receiver in another language would.
	m := hmac.New(sha256.New, secret)
	fmt.Fprintf(m, "%d.%s", sentAt.Unix(), body)
	want := fmt.Sprintf("t=%d,v1=%s", sentAt.Unix(), hex.EncodeToString(m.Sum(nil)))
	if got := egress.Sign(secret, sentAt, body); got != want {
		t.Errorf("Sign = %s, want %s", got, want)
	}
}

func TestVerify(t *testing.T) {
	header := egress.Sign(secret, sentAt, body)
	other := egress.Sign([]byte("old secret"), sentAt, body)
	tests := []struct {
		name    string
		secret  []byte
		header  string
		body    []byte
		now     time.Time
		wantErr error
	}{
		{"round trip", secret, header, body, sentAt, nil},
		{"within tolerance", secret, header, body, sentAt.Add(4 * time.Minute), nil},
		{"slightly in the future", secret, header, body, sentAt.Add(-time.Minute), nil},
		{"rotation: second v1 matches", secret, other + ",v1=" + header[len("t=1767225600,v1="):], body, sentAt, nil},
		{"unknown scheme ignored", secret, header + ",v0=abc", body, sentAt, nil},
		{"tampered body", secret, header, []byte(`{"event":"run.completed","run_id":"r2"}`), sentAt, egress.ErrInvalidSignature},
		{"wrong secret", []byte("whsec_other"), header, body, sentAt, egress.ErrInvalidSignature},
		{"empty secret", nil, egress.Sign(nil, sentAt, body), body, sentAt, egress.ErrInvalidSignature},
		{"stale", secret, header, body, sentAt.Add(6 * time.Minute), egress.ErrSignatureExpired},
		{"too far in the future", secret, header, body, sentAt.Add(-6 * time.Minute), egress.ErrSignatureExpired},
		{"timestamp changed", secret, "t=1767225601" + header[len("t=1767225600"):], body, sentAt, egress.ErrInvalidSignature},
		{"no timestamp", secret, header[len("t=1767225600,"):], body, sentAt, egress.ErrInvalidSignature},
		{"no signature", secret, "t=1767225600", body, sentAt, egress.ErrInvalidSignature},
		{"two timestamps", secret, "t=1," + header, body, sentAt, egress.ErrInvalidSignature},
		{"empty header", secret, "", body, sentAt, egress.ErrInvalidSignature},
		{"garbage", secret, "sha256=deadbeef", body, sentAt, egress.ErrInvalidSignature},
		{"bad timestamp", secret, "t=soon,v1=00", body, sentAt, egress.ErrInvalidSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := egress.Verify(tt.secret, tt.header, tt.body, 5*time.Minute, tt.now)
			if tt.wantErr == nil && err != nil || !errors.Is(err, tt.wantErr) {
				t.Errorf("Verify(%q) = %v, want %v", tt.header, err, tt.wantErr)
			}
		})
	}
}

func TestVerifyDefaultTolerance(t *testing.T) {
	header := egress.Sign(secret, sentAt, body)
	if err := egress.Verify(secret, header, body, 0, sentAt.Add(egress.DefaultTolerance-time.Second)); err != nil {
		t.Errorf("Verify within the default tolerance = %v", err)
	}
	if err := egress.Verify(secret, header, body, 0, sentAt.Add(egress.DefaultTolerance+time.Second)); !errors.Is(err, egress.ErrSignatureExpired) {
		t.Errorf("Verify past the default tolerance = %v, want ErrSignatureExpired", err)
	}
}
