//go:build race

package sandbox

import (
	"os"
	"strings"
)

// raceEnabled: the race detector reserves terabytes of shadow address
// space, so RLIMIT_AS is left off and the resident-memory watch caps the
// job alone.
const raceEnabled = true

// childGORACE is the race detector's settings for a child: the parent's
// GORACE, with no sleep at exit. The detector's default is to sleep a
// second before a race-built program exits (atexit_sleep_ms=1000, so that
// other goroutines can report), which made every sandboxed job of a test
// take a second; a race found in the child is reported when it happens,
// and the child's exit status says so, sleep or not.
func childGORACE() string {
	v := strings.TrimSpace(os.Getenv("GORACE"))
	if !strings.Contains(v, "atexit_sleep_ms") {
		v = strings.TrimSpace(v + " atexit_sleep_ms=0")
	}
	return "GORACE=" + v
}
