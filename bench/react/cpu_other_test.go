//go:build !unix

package react

import "time"

// cpuTime cannot read the process's CPU time here; see cpu_unix_test.go.
func cpuTime() (time.Duration, bool) { return 0, false }
