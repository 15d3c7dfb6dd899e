package identity

import (
	"errors"
	"regexp"
	"strings"
	"testing"
)

// cheap is argon2id with tiny parameters: tests hash many passwords under
// -race.
var cheap = Argon2id{Memory: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32}

func TestArgon2idDefaultsArePHC(t *testing.T) {
	h, err := DefaultArgon2id.Hash("correct horse battery staple")
	if err != nil {
		t.Fatal(err)
	}
	// OWASP: m=19 MiB, t=2, p=1; 16-byte salt (22 chars), 32-byte key (43).
	if !regexp.MustCompile(`^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$`).MatchString(h) {
		t.Fatalf("Hash = %q, not the PHC string of the OWASP parameters", h)
	}
	ok, rehash, err := DefaultArgon2id.Verify("correct horse battery staple", h)
	if !ok || rehash || err != nil {
		t.Errorf("Verify(right) = %t, %t, %v", ok, rehash, err)
	}
	ok, _, err = DefaultArgon2id.Verify("correct horse battery stapler", h)
	if ok || err != nil {
		t.Errorf("Verify(wrong) = %t, %v", ok, err)
	}
	h2, _ := DefaultArgon2id.Hash("correct horse battery staple")
	if h2 == h {
		t.Error("two hashes of one password are equal: the salt is not random")
	}
}

func TestRehashWhenParametersChange(t *testing.T) {
	h, err := cheap.Hash("a long enough password")
	if err != nil {
		t.Fatal(err)
	}
	stronger := cheap
	stronger.Time = 2
	ok, rehash, err := stronger.Verify("a long enough password", h)
	if !ok || !rehash || err != nil {
		t.Errorf("Verify with new parameters = ok %t, rehash %t, %v; want ok and rehash", ok, rehash, err)
	}
	if _, rehash, _ := cheap.Verify("a long enough password", h); rehash {
		t.Error("rehash asked with unchanged parameters")
	}
}

func TestVerifyRefusesMalformed(t *testing.T) {
	good, _ := cheap.Hash("a long enough password")
	for _, bad := range []string{"", "hunter2", "$argon2i$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$a2V5", "$argon2id$v=18$m=64,t=1,p=1$c2FsdHNhbHRzYWx0$a2V5a2V5a2V5a2V5a2V5",
		"$argon2id$v=19$m=9999999999,t=1,p=1$c2FsdHNhbHRzYWx0$a2V5a2V5a2V5a2V5a2V5",
		"$argon2id$v=19$m=64,t=1,p=1$!!!$a2V5", strings.Replace(good, "m=64", "x=64", 1), good + "$"} {
		if _, _, err := cheap.Verify("pw", bad); err == nil {
			t.Errorf("Verify(%q) = nil error", bad)
		}
	}
}

func TestCheckPassword(t *testing.T) {
	if err := CheckPassword("short"); !errors.Is(err, ErrPasswordTooShort) || !strings.Contains(err.Error(), "12") {
		t.Errorf("CheckPassword(short) = %v, want ErrPasswordTooShort naming 12", err)
	}
	// Counted in characters: 12 kana are 36 bytes, and long enough.
	if err := CheckPassword("あいうえおかきくけこさし"); err != nil {
		t.Errorf("CheckPassword(12 kana) = %v", err)
	}
	if err := CheckPassword("あいうえおかきくけこさ"); err == nil {
		t.Error("CheckPassword(11 kana) = nil")
	}
	if err := CheckPassword(strings.Repeat("x", 2000)); !errors.Is(err, ErrPasswordTooLong) {
		t.Errorf("CheckPassword(2000 bytes) = %v", err)
	}
}

// FuzzParsePHC: a stored hash is read back from the database; whatever
// is there must give an error, never a panic or a huge allocation.
func FuzzParsePHC(f *testing.F) {
	good, _ := cheap.Hash("a long enough password")
	f.Add(good)
	f.Add("$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$a2V5")
	f.Add("$argon2id$v=19$m=,t=,p=$$")
	f.Fuzz(func(t *testing.T, s string) {
		p, salt, key, err := parsePHC(s)
		if err == nil && (p.Memory > 1<<22 || p.Time > 100 || len(salt) < 8 || len(key) < 16) {
			t.Fatalf("parsePHC(%q) accepted out-of-bounds parameters %+v", s, p)
		}
	})
}

// BenchmarkHashPassword is the cost of one sign-in's hash with the
// default (OWASP) parameters.
func BenchmarkHashPassword(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DefaultArgon2id.Hash("correct horse battery staple"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDummyHashOnFirstSignIn checks that New hashes nothing (argon2id's
// 19 MiB and tens of milliseconds were start-up cost of every serve), and
// that the dummy an unknown address is checked against is hashed once, by
// the first sign-in of any kind.
func TestDummyHashOnFirstSignIn(t *testing.T) {
	ctx := t.Context()
	h := &countingHasher{Hasher: cheap}
	svc, err := New(openTestStore(t), &Options{Hasher: h})
	if err != nil {
		t.Fatal(err)
	}
	if n := h.hashes.Load(); n != 0 {
		t.Fatalf("New made %d hash(es), want 0", n)
	}
	if _, err := svc.Login(ctx, "nobody@example.com", goodPassword, client); !errors.Is(err, ErrBadCredentials) {
		t.Fatalf("Login of an unknown address: %v, want ErrBadCredentials", err)
	}
	if n := h.hashes.Load(); n != 1 {
		t.Fatalf("after the first sign-in %d hashes, want 1 (the dummy)", n)
	}
	if _, err := svc.Login(ctx, "nobody2@example.com", goodPassword, client); !errors.Is(err, ErrBadCredentials) {
		t.Fatalf("second Login: %v", err)
	}
	if n := h.hashes.Load(); n != 1 {
		t.Errorf("after two sign-ins %d hashes, want the dummy's 1", n)
	}
}
