//go:build unix

package react

import (
	"syscall"
	"time"
)

// cpuTime is the process's CPU time so far, user and system, every thread
// (the collector's workers too), as js/bench.mjs's process.cpuUsage counts
// it; ok is false where it cannot be read.
func cpuTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
