package gctune_test

import (
	"context"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/internal/gctune"
)

var sink [][]byte

func heapFree() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/free:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestReleaseWhenIdle: after a burst leaves tens of MB of free heap behind
// and the process goes quiet, the releaser hands them back to the system
// within a few periods (Go's own scavenger keeps them under serve's GC
// target, as the control shows).
func TestReleaseWhenIdle(t *testing.T) {
	restore(t)
	debug.SetGCPercent(gctune.DefaultGCPercent)
	burst := func() {
		for range 64 {
			sink = append(sink, make([]byte, 1<<20))
		}
		sink = nil
		runtime.GC() // frees the burst; the memory stays with the process
	}

	burst()
	time.Sleep(300 * time.Millisecond)
	if free := heapFree(); free < 32<<20 {
		t.Skipf("control: the runtime already released the burst (%d MiB free); nothing to measure", free>>20)
	}

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { gctune.ReleaseWhenIdle(ctx, gctune.IdleRelease{Every: 50 * time.Millisecond}) })
	defer func() { cancel(); wg.Wait() }()
	time.Sleep(20 * time.Millisecond) // past the release at start
	burst()
	deadline := time.Now().Add(2 * time.Second)
	for heapFree() > 8<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("free heap still %d MiB two seconds after the burst; want it released", heapFree()>>20)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
