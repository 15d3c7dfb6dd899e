package store

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// EncodeAuditCursor returns the AuditPage.Next that continues a listing
// after the event created at createdAt with the given id. Drivers use it;
// callers treat cursors as opaque.
//
// The cursor is the position itself (microseconds and id), not an offset:
// events appended while a client pages through a listing land before its
// first page (they are newer) and so neither repeat nor skip an event of
// the pages still to come.
func EncodeAuditCursor(createdAt time.Time, id string) string {
	raw := strconv.FormatInt(Timestamp(createdAt).UnixMicro(), 10) + ":" + id
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// DecodeAuditCursor reverses EncodeAuditCursor. A cursor it did not make
// gives ErrInvalid.
func DecodeAuditCursor(cursor string) (createdAt time.Time, id string, err error) {
	bad := func(why string) (time.Time, string, error) {
		return time.Time{}, "", fmt.Errorf("%w: audit cursor %q is malformed (%s); pass the next value of the previous page unchanged", ErrInvalid, cursor, why)
	}
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return bad("not base64url")
	}
	micros, id, ok := strings.Cut(string(raw), ":")
	if !ok || id == "" {
		return bad("no id")
	}
	us, err := strconv.ParseInt(micros, 10, 64)
	if err != nil || us < 0 {
		return bad("no time")
	}
	return time.UnixMicro(us).UTC(), id, nil
}

// ClampAuditLimit returns the page size a driver uses for limit:
// DefaultAuditLimit when limit <= 0, at most MaxAuditLimit.
func ClampAuditLimit(limit int) int {
	if limit <= 0 {
		return DefaultAuditLimit
	}
	return min(limit, MaxAuditLimit)
}
