// Package gctune sets the garbage collector of a long-running agentcraft
// process (serve, worker) from server.gc_percent and
// server.memory_limit_mib, unless the GOGC or GOMEMLIMIT environment
// variables already say otherwise.
//
// Why: a gateway's live heap is small (tens of MB) but it allocates for
// every request, and on a two-core machine each collection's mark phase
// takes a large share of the CPU for tens of milliseconds, in which the
// chunks of every open stream wait (BenchmarkGatewayOverhead in
// server/openaiapi measures it: at Go's default GOGC=100 most of the
// per-chunk p99 is collections). A higher target makes collections rarer;
// the soft memory limit keeps that from growing the heap out of the
// machine, since under it the collector runs as often as it must.
package gctune

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// Settings are what Apply set, or found set by the environment.
type Settings struct {
	GCPercent int
	// MemoryLimit is the soft limit in bytes; math.MaxInt64 means none.
	MemoryLimit int64
	// FromEnv names the environment variables that took precedence.
	FromEnv []string
}

// DefaultGCPercent is serve's and worker's GC target (server.gc_percent)
// when the configuration sets none: a proxy's live heap is small and its
// garbage is short-lived, so fewer collections make steadier latency.
const DefaultGCPercent = 400

// Apply sets the collector's target percentage and soft memory limit.
// gcPercent is GOGC's value; memoryLimitMiB is the limit in MiB, 0 for
// half of Available(), -1 for none. A variable set in getenv (GOGC,
// GOMEMLIMIT) wins over its setting: the runtime has already read it.
func Apply(gcPercent int, memoryLimitMiB int64, getenv func(string) string) Settings {
	var s Settings
	if getenv("GOGC") != "" {
		s.FromEnv = append(s.FromEnv, "GOGC")
		s.GCPercent = debug.SetGCPercent(-1)
		debug.SetGCPercent(s.GCPercent)
	} else {
		debug.SetGCPercent(gcPercent)
		s.GCPercent = gcPercent
	}
	if getenv("GOMEMLIMIT") != "" {
		s.FromEnv = append(s.FromEnv, "GOMEMLIMIT")
		s.MemoryLimit = debug.SetMemoryLimit(-1) // -1 reads without changing
		return s
	}
	limit := int64(math.MaxInt64)
	switch {
	case memoryLimitMiB > 0:
		limit = memoryLimitMiB << 20
	case memoryLimitMiB == 0:
		if avail := Available(); avail > 0 {
			limit = avail / 2
		}
	}
	debug.SetMemoryLimit(limit)
	s.MemoryLimit = limit
	return s
}

// Available is the memory this process may use: its cgroup's limit
// (v2 memory.max, else v1 memory.limit_in_bytes) when one is set, else the
// machine's total; 0 when neither can be read (not Linux).
func Available() int64 {
	total := memTotal()
	for _, path := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || n <= 0 {
			continue // "max": no limit
		}
		if total == 0 || n < total { // v1 reports a huge number for none
			return n
		}
	}
	return total
}

// memTotal reads MemTotal from /proc/meminfo, in bytes.
func memTotal() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return 0
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}
