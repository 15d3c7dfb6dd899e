package gctune_test

import (
	"math"
	"runtime/debug"
	"slices"
	"testing"

	"github.com/agentcraftlab/agentcraft/internal/gctune"
)

// restore puts the collector back as the test found it.
func restore(t *testing.T) {
	pct := debug.SetGCPercent(100)
	debug.SetGCPercent(pct)
	limit := debug.SetMemoryLimit(-1)
	t.Cleanup(func() {
		debug.SetGCPercent(pct)
		debug.SetMemoryLimit(limit)
	})
}

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestApplySetsTheCollector(t *testing.T) {
	restore(t)
	got := gctune.Apply(400, 256, env(nil))
	if got.GCPercent != 400 || got.MemoryLimit != 256<<20 || len(got.FromEnv) != 0 {
		t.Fatalf("Apply = %+v, want 400%% and 256 MiB", got)
	}
	if pct := debug.SetGCPercent(100); pct != 400 {
		t.Errorf("GOGC in effect = %d, want 400", pct)
	}
	if limit := debug.SetMemoryLimit(-1); limit != 256<<20 {
		t.Errorf("memory limit in effect = %d, want %d", limit, 256<<20)
	}

	got = gctune.Apply(200, -1, env(nil))
	if got.MemoryLimit != math.MaxInt64 || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Errorf("memory_limit_mib -1 left a limit: %+v", got)
	}
}

func TestApplyDefaultLimitIsHalfTheMemory(t *testing.T) {
	restore(t)
	avail := gctune.Available()
	if avail <= 0 {
		t.Skip("cannot read this machine's memory")
	}
	got := gctune.Apply(400, 0, env(nil))
	if got.MemoryLimit != avail/2 || debug.SetMemoryLimit(-1) != avail/2 {
		t.Errorf("limit = %d, want half of %d", got.MemoryLimit, avail)
	}
}

func TestApplyLeavesWhatTheEnvironmentSet(t *testing.T) {
	restore(t)
	debug.SetGCPercent(150) // as GOGC=150 at start would have
	debug.SetMemoryLimit(64 << 20)
	got := gctune.Apply(400, 256, env(map[string]string{"GOGC": "150", "GOMEMLIMIT": "64MiB"}))
	if got.GCPercent != 150 || got.MemoryLimit != 64<<20 || !slices.Equal(got.FromEnv, []string{"GOGC", "GOMEMLIMIT"}) {
		t.Errorf("Apply = %+v, want the environment's 150%% and 64 MiB kept", got)
	}
	if pct := debug.SetGCPercent(100); pct != 150 {
		t.Errorf("GOGC in effect = %d, want 150", pct)
	}
}
