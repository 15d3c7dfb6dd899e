package secret_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"testing"

	"github.com/agentcraftlab/agentcraft/secret"
)

func newKey(t testing.TB) []byte {
	t.Helper()
	key := make([]byte, secret.KeySize)
	rand.Read(key)
	return key
}

func newBox(t testing.TB, key []byte) *secret.Box {
	t.Helper()
	b, err := secret.New(key)
	if err != nil {
		t.Fatalf("New = %v", err)
	}
	return b
}

func TestSealOpenRoundTrip(t *testing.T) {
	box := newBox(t, newKey(t))
	ad := secret.Bind("ws-1", "openai")
	for _, plaintext := range [][]byte{
		[]byte("sk-proj-abc123"),
		{},
		bytes.Repeat([]byte{0, 0xff}, 4096),
	} {
		sealed, err := box.Seal(plaintext, ad)
		if err != nil {
			t.Fatalf("Seal = %v", err)
		}
		if len(plaintext) > 4 && bytes.Contains(sealed, plaintext) {
			t.Errorf("sealed value contains the plaintext")
		}
		got, err := box.Open(sealed, ad)
		if err != nil {
			t.Fatalf("Open = %v", err)
		}
		if !bytes.Equal(got, plaintext) {
			t.Errorf("Open = %q, want %q", got, plaintext)
		}
		id, err := secret.KeyIDOf(sealed)
		if err != nil || id != box.KeyID() {
			t.Errorf("KeyIDOf = %q, %v; want %q", id, err, box.KeyID())
		}
	}
}

func TestSealIsRandomized(t *testing.T) {
	box := newBox(t, newKey(t))
	a, _ := box.Seal([]byte("same"), nil)
	b, _ := box.Seal([]byte("same"), nil)
	if bytes.Equal(a, b) {
		t.Error("two seals of the same plaintext are equal; nonces or data keys repeat")
	}
}

func TestKeyID(t *testing.T) {
	key := newKey(t)
	a, b := newBox(t, key), newBox(t, bytes.Clone(key))
	if a.KeyID() != b.KeyID() {
		t.Errorf("same key, different ids: %s %s", a.KeyID(), b.KeyID())
	}
	if len(a.KeyID()) != 16 {
		t.Errorf("KeyID() = %q, want 16 hex characters", a.KeyID())
	}
	if other := newBox(t, newKey(t)); other.KeyID() == a.KeyID() {
		t.Errorf("different keys share id %s", a.KeyID())
	}
}

func TestNewRejectsBadKeySize(t *testing.T) {
	for _, n := range []int{0, 16, 31, 33, 64} {
		if _, err := secret.New(make([]byte, n)); err == nil {
			t.Errorf("New(%d-byte key) = nil error", n)
		}
	}
}

func TestOpenDetectsTampering(t *testing.T) {
	box := newBox(t, newKey(t))
	ad := secret.Bind("ws", "anthropic")
	sealed, err := box.Seal([]byte("sk-ant-secret"), ad)
	if err != nil {
		t.Fatal(err)
	}
	// Flip one bit of every byte in turn: none may open.
	for i := range sealed {
		bad := bytes.Clone(sealed)
		bad[i] ^= 0x01
		if got, err := box.Open(bad, ad); err == nil {
			t.Errorf("Open with byte %d altered = %q, want an error", i, got)
		}
	}
	// Every truncation fails too.
	for n := range len(sealed) {
		if _, err := box.Open(sealed[:n], ad); !errors.Is(err, secret.ErrDecrypt) {
			t.Errorf("Open(first %d bytes) = %v, want ErrDecrypt", n, err)
		}
	}
	if _, err := box.Open(append(bytes.Clone(sealed), 0), ad); !errors.Is(err, secret.ErrDecrypt) {
		t.Errorf("Open(extra byte) = %v, want ErrDecrypt", err)
	}
	// Altering the ciphertext proper is an authentication failure.
	bad := bytes.Clone(sealed)
	bad[len(bad)-1] ^= 0x80
	if _, err := box.Open(bad, ad); !errors.Is(err, secret.ErrDecrypt) {
		t.Errorf("Open(altered tag) = %v, want ErrDecrypt", err)
	}
}

func TestOpenWrongAssociatedData(t *testing.T) {
	box := newBox(t, newKey(t))
	sealed, err := box.Seal([]byte("sk-1"), secret.Bind("ws-a", "openai"))
	if err != nil {
		t.Fatal(err)
	}
	for name, ad := range map[string][]byte{
		"other workspace": secret.Bind("ws-b", "openai"),
		"other provider":  secret.Bind("ws-a", "anthropic"),
		"shifted parts":   secret.Bind("ws-ao", "penai"),
		"none":            nil,
	} {
		if _, err := box.Open(sealed, ad); !errors.Is(err, secret.ErrDecrypt) {
			t.Errorf("Open with %s = %v, want ErrDecrypt", name, err)
		}
	}
}

func TestOpenWrongKey(t *testing.T) {
	sealed, err := newBox(t, newKey(t)).Seal([]byte("sk-1"), nil)
	if err != nil {
		t.Fatal(err)
	}
	other := newBox(t, newKey(t))
	if _, err := other.Open(sealed, nil); !errors.Is(err, secret.ErrUnknownKey) {
		t.Errorf("Open with another key = %v, want ErrUnknownKey", err)
	}
	// A forged header naming the other box's key still fails: the data
	// key was wrapped under the first key.
	forged := append([]byte{sealed[0], byte(len(other.KeyID()))}, other.KeyID()...)
	forged = append(forged, sealed[2+int(sealed[1]):]...)
	if _, err := other.Open(forged, nil); !errors.Is(err, secret.ErrDecrypt) {
		t.Errorf("Open with a forged key id = %v, want ErrDecrypt", err)
	}
}

func TestBindIsUnambiguous(t *testing.T) {
	if bytes.Equal(secret.Bind("ab", "c"), secret.Bind("a", "bc")) {
		t.Error(`Bind("ab", "c") == Bind("a", "bc")`)
	}
	if bytes.Equal(secret.Bind("a", ""), secret.Bind("a")) {
		t.Error(`Bind("a", "") == Bind("a")`)
	}
}

func BenchmarkSeal(b *testing.B) {
	box := newBox(b, newKey(b))
	plaintext := []byte("sk-proj-0123456789abcdef0123456789abcdef")
	ad := secret.Bind("01970000-0000-7000-8000-000000000000", "openai")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := box.Seal(plaintext, ad); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOpen(b *testing.B) {
	box := newBox(b, newKey(b))
	ad := secret.Bind("01970000-0000-7000-8000-000000000000", "openai")
	sealed, err := box.Seal([]byte("sk-proj-0123456789abcdef0123456789abcdef"), ad)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := box.Open(sealed, ad); err != nil {
			b.Fatal(err)
		}
	}
}
