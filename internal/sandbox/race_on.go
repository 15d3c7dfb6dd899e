//go:build race

package sandbox

// raceEnabled: the race detector reserves terabytes of shadow address
// space, so RLIMIT_AS is left off and the resident-memory watch caps the
// job alone.
const raceEnabled = true
