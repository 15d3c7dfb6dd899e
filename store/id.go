package store

import (
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

// Timestamp normalizes t to what the drivers store and return: UTC,
// truncated to the microsecond. Drivers apply it to every time they write so
// that a row read back compares equal to the row written.
func Timestamp(t time.Time) time.Time {
	return t.UTC().Truncate(time.Microsecond)
}
