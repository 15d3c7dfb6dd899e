package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
)

// KeySize is the size of a master key: 32 bytes, for AES-256.
const KeySize = 32

// Errors returned by Box.Open.
var (
	// ErrDecrypt means the value does not open: it was tampered with,
	// truncated, or sealed with other associated data.
	ErrDecrypt = errors.New("secret: decrypt failed")
	// ErrUnknownKey means the value was sealed with another master key
	// than the Box holds.
	ErrUnknownKey = errors.New("secret: sealed with an unknown master key")
)

const (
	formatV1    = 1
	dataKeySize = 32
	// wrappedSize is a data key sealed by a random-nonce GCM: nonce, key, tag.
	wrappedSize = 12 + dataKeySize + 16
)

// Box seals and opens values under one master key. It is safe for
// concurrent use.
type Box struct {
	keyID string
	kek   cipher.AEAD // wraps data keys; random nonces
}

// New returns a Box for masterKey, which must be KeySize bytes. The Box
// keeps no reference to masterKey.
func New(masterKey []byte) (*Box, error) {
	if len(masterKey) != KeySize {
		return nil, fmt.Errorf("secret: master key is %d bytes, want %d", len(masterKey), KeySize)
	}
	kek, err := hkdf.Key(sha256.New, masterKey, nil, "agentcraft secret v1 key-encryption key", KeySize)
	if err != nil {
		return nil, fmt.Errorf("secret: derive key: %w", err)
	}
	id, err := hkdf.Key(sha256.New, masterKey, nil, "agentcraft secret v1 key id", 8)
	if err != nil {
		return nil, fmt.Errorf("secret: derive key id: %w", err)
	}
	aead, err := newAEAD(kek)
	clear(kek)
	if err != nil {
		return nil, err
	}
	return &Box{keyID: hex.EncodeToString(id), kek: aead}, nil
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("secret: %w", err)
	}
	aead, err := cipher.NewGCMWithRandomNonce(block)
	if err != nil {
		return nil, fmt.Errorf("secret: %w", err)
	}
	return aead, nil
}

// KeyID names the master key: 16 hex characters derived one-way from it,
// the same for the same key on every machine.
func (b *Box) KeyID() string { return b.keyID }

// Seal encrypts plaintext and authenticates it together with
// associatedData, which Open must be given again. Build associatedData with
// Bind.
func (b *Box) Seal(plaintext, associatedData []byte) ([]byte, error) {
	header := b.header()
	dataKey := make([]byte, dataKeySize)
	rand.Read(dataKey) // never fails since Go 1.24
	defer clear(dataKey)
	data, err := newAEAD(dataKey)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(header)+wrappedSize+data.Overhead()+len(plaintext))
	out = append(out, header...)
	out = b.kek.Seal(out, nil, dataKey, header)
	ad := append(header[:len(header):len(header)], associatedData...)
	return data.Seal(out, nil, plaintext, ad), nil
}

// Open decrypts a value made by Seal with the same associatedData. It
// returns ErrUnknownKey for a value sealed with another master key and
// ErrDecrypt for one that is malformed, altered, or sealed with other
// associated data.
func (b *Box) Open(sealed, associatedData []byte) ([]byte, error) {
	id, rest, err := parseHeader(sealed)
	if err != nil {
		return nil, err
	}
	if id != b.keyID {
		return nil, fmt.Errorf("%w: sealed with key %s, this box holds %s", ErrUnknownKey, id, b.keyID)
	}
	header := sealed[:len(sealed)-len(rest)]
	if len(rest) < wrappedSize {
		return nil, fmt.Errorf("%w: value truncated", ErrDecrypt)
	}
	dataKey, err := b.kek.Open(nil, nil, rest[:wrappedSize], header)
	if err != nil {
		return nil, fmt.Errorf("%w: unwrap data key: authentication failed", ErrDecrypt)
	}
	defer clear(dataKey)
	data, err := newAEAD(dataKey)
	if err != nil {
		return nil, err
	}
	ad := append(header[:len(header):len(header)], associatedData...)
	plaintext, err := data.Open(nil, nil, rest[wrappedSize:], ad)
	if err != nil {
		return nil, fmt.Errorf("%w: authentication failed (altered value or wrong associated data)", ErrDecrypt)
	}
	return plaintext, nil
}

func (b *Box) header() []byte {
	h := make([]byte, 0, 2+len(b.keyID))
	h = append(h, formatV1, byte(len(b.keyID)))
	return append(h, b.keyID...)
}

// parseHeader splits a sealed value into its key id and the rest.
func parseHeader(sealed []byte) (keyID string, rest []byte, err error) {
	if len(sealed) < 2 {
		return "", nil, fmt.Errorf("%w: value too short", ErrDecrypt)
	}
	if sealed[0] != formatV1 {
		return "", nil, fmt.Errorf("%w: unknown format version %d", ErrDecrypt, sealed[0])
	}
	n := int(sealed[1])
	if len(sealed) < 2+n {
		return "", nil, fmt.Errorf("%w: value truncated", ErrDecrypt)
	}
	return string(sealed[2 : 2+n]), sealed[2+n:], nil
}

// KeyIDOf returns the KeyID of the master key that sealed a value, without
// decrypting it. Rotation uses it to find values still sealed with an old
// key.
func KeyIDOf(sealed []byte) (string, error) {
	id, _, err := parseHeader(sealed)
	return id, err
}

// Bind returns associated data that binds a sealed value to parts, such as
// Bind(workspaceID, providerName). Each part is length-prefixed, so
// Bind("ab", "c") and Bind("a", "bc") differ.
func Bind(parts ...string) []byte {
	var b []byte
	for _, p := range parts {
		b = binary.AppendUvarint(b, uint64(len(p)))
		b = append(b, p...)
	}
	return b
}
