package store

import (
	"crypto/sha256"
	"encoding/binary"
	"time"

	"github.com/google/uuid"
)

// NewID returns a new row id: a UUIDv7 in its canonical text form. Ids sort
// by creation time, which keeps B-tree inserts at the right edge of the
// index and makes id order a stable tie-breaker after created_at.
func NewID() string {
	// NewV7 fails only when the system's random source does, which
	// crypto/rand treats as fatal since Go 1.24; Must cannot panic here.
	return uuid.Must(uuid.NewV7()).String()
}

// IDFor returns the row id of the one thing that key names, happening at
// t: laid out as NewID's UUIDv7, with t (to the millisecond) as its time
// and a SHA-256 of key in place of the random bits, so the same (t, key)
// always gives the same id. Processes that may each create the row (a
// scheduler and, after its crash, another one) agree on its id before it
// exists: the second insert is ErrConflict instead of a second row. Keys
// must be unique across every use (prefix them with what they name).
func IDFor(t time.Time, key string) string {
	var u uuid.UUID
	var ms [8]byte
	binary.BigEndian.PutUint64(ms[:], uint64(max(t.UnixMilli(), 0)))
	copy(u[:6], ms[2:])
	sum := sha256.Sum256([]byte(key))
	copy(u[6:], sum[:10])
	u[6] = u[6]&0x0f | 0x70 // version 7
	u[8] = u[8]&0x3f | 0x80 // RFC 9562 variant
	return u.String()
}

// Timestamp normalizes t to what the drivers store and return: UTC,
// truncated to the microsecond. Drivers apply it to every time they write so
// that a row read back compares equal to the row written.
func Timestamp(t time.Time) time.Time {
	return t.UTC().Truncate(time.Microsecond)
}
