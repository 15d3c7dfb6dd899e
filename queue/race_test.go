//go:build race

package queue

// raceEnabled reports a -race build. The race detector instruments every
// memory access of modernc.org/sqlite (C translated to Go), which slows
// SQLite queries several times over, so latency bounds do not hold.
const raceEnabled = true
