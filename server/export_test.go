package server

import (
	"testing"
	"time"
)

// SetKeyTTL makes the server re-read an API key once d has passed since it
// was cached, until t ends. Tests calling it must not be parallel.
func SetKeyTTL(t testing.TB, d time.Duration) {
	t.Helper()
	old := keyTTL
	keyTTL = d
	t.Cleanup(func() { keyTTL = old })
}
