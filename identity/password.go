package identity

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"
)

// MinPasswordLength is the shortest password accepted, in characters.
// Length is what makes a password strong (NIST SP 800-63B); there are no
// rules on character classes.
const MinPasswordLength = 12

// maxPasswordBytes bounds the input of the hash, so a megabyte "password"
// costs no more than a normal one.
const maxPasswordBytes = 1024

// ErrPasswordTooShort and ErrPasswordTooLong refuse a new password.
var (
	ErrPasswordTooShort = fmt.Errorf("identity: the password is shorter than %d characters; choose a longer one (a few words make a good one)", MinPasswordLength)
	ErrPasswordTooLong  = fmt.Errorf("identity: the password is longer than %d bytes", maxPasswordBytes)
)

// CheckPassword reports whether password may be set as a new password.
func CheckPassword(password string) error {
	switch {
	case utf8.RuneCountInString(password) < MinPasswordLength:
		return ErrPasswordTooShort
	case len(password) > maxPasswordBytes:
		return ErrPasswordTooLong
	}
	return nil
}

// Hasher hashes passwords into self-describing strings and checks them.
// Verify reports whether password matches encoded and whether encoded
// should be replaced by a new Hash (its parameters are not the current
// ones); a malformed encoded string is an error.
type Hasher interface {
	Hash(password string) (string, error)
	Verify(password, encoded string) (ok, rehash bool, err error)
}

// Argon2id hashes with argon2id into PHC strings
// ("$argon2id$v=19$m=19456,t=2,p=1$<salt>$<key>", base64 without padding).
type Argon2id struct {
	// Memory is in KiB.
	Memory  uint32
	Time    uint32
	Threads uint8
	SaltLen uint32
	KeyLen  uint32
}

// DefaultArgon2id has OWASP's recommended parameters (Password Storage
// Cheat Sheet): 19 MiB, 2 passes, 1 lane, 16-byte salt, 32-byte key.
var DefaultArgon2id = Argon2id{Memory: 19 * 1024, Time: 2, Threads: 1, SaltLen: 16, KeyLen: 32}

var _ Hasher = Argon2id{}

// Hash implements Hasher.
func (a Argon2id) Hash(password string) (string, error) {
	salt := make([]byte, a.SaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("identity: hash password: %w", err)
	}
	key := argon2.IDKey([]byte(password), salt, a.Time, a.Memory, a.Threads, a.KeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, a.Memory, a.Time, a.Threads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key)), nil
}

// errMalformedHash is the error of a stored hash Verify cannot read.
var errMalformedHash = errors.New("identity: stored password hash is not an argon2id PHC string")

// Verify implements Hasher, comparing in constant time.
func (a Argon2id) Verify(password, encoded string) (ok, rehash bool, err error) {
	p, salt, key, err := parsePHC(encoded)
	if err != nil {
		return false, false, err
	}
	got := argon2.IDKey([]byte(password), salt, p.Time, p.Memory, p.Threads, uint32(len(key)))
	ok = subtle.ConstantTimeCompare(got, key) == 1
	rehash = p.Memory != a.Memory || p.Time != a.Time || p.Threads != a.Threads ||
		uint32(len(salt)) != a.SaltLen || uint32(len(key)) != a.KeyLen
	return ok, rehash, nil
}

// parsePHC reads "$argon2id$v=19$m=M,t=T,p=P$salt$key".
func parsePHC(s string) (Argon2id, []byte, []byte, error) {
	parts := strings.Split(s, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" || parts[2] != "v="+strconv.Itoa(argon2.Version) {
		return Argon2id{}, nil, nil, errMalformedHash
	}
	var p Argon2id
	for _, kv := range strings.Split(parts[3], ",") {
		k, v, _ := strings.Cut(kv, "=")
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			return Argon2id{}, nil, nil, errMalformedHash
		}
		switch k {
		case "m":
			p.Memory = uint32(n)
		case "t":
			p.Time = uint32(n)
		case "p":
			if n > 255 {
				return Argon2id{}, nil, nil, errMalformedHash
			}
			p.Threads = uint8(n)
		default:
			return Argon2id{}, nil, nil, errMalformedHash
		}
	}
	// Bounds keep a corrupted or hostile row from costing gigabytes.
	if p.Memory < 8 || p.Memory > 1<<22 || p.Time < 1 || p.Time > 100 || p.Threads < 1 {
		return Argon2id{}, nil, nil, errMalformedHash
	}
	salt, err1 := base64.RawStdEncoding.DecodeString(parts[4])
	key, err2 := base64.RawStdEncoding.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(salt) < 8 || len(key) < 16 || len(key) > 128 {
		return Argon2id{}, nil, nil, errMalformedHash
	}
	return p, salt, key, nil
}
