package gctune

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// IdleRelease is how ReleaseWhenIdle decides; the zero value is the default.
type IdleRelease struct {
	// Every is how often it looks. Default 30 s.
	Every time.Duration
	// Slack is how many bytes of free heap may stay with the process
	// before a release is worth its collection. Default 4 MiB.
	Slack uint64
}

// ReleaseWhenIdle returns the free part of the heap to the operating
// system, once at start and then whenever a period of Every passed with
// no collection and more than Slack bytes of heap free but still held. It
// returns when ctx is done.
//
// Why: under DefaultGCPercent the heap goal is five times the live heap,
// and Go's background scavenger keeps memory up to that goal. A server
// that went quiet after start-up (migrations, catalogue building) or after
// a burst of requests would keep that memory as resident set for as long
// as it stays quiet, since a quiet process allocates too little to reach
// its next collection. A period with no collection is the sign of that
// quiet; a busy process collects often and is left alone, so the forced
// collection never lands on a loaded server.
func ReleaseWhenIdle(ctx context.Context, o IdleRelease) {
	every := o.Every
	if every <= 0 {
		every = 30 * time.Second
	}
	slack := o.Slack
	if slack == 0 {
		slack = 4 << 20
	}
	debug.FreeOSMemory()
	samples := []metrics.Sample{
		{Name: "/gc/cycles/total:gc-cycles"},
		{Name: "/memory/classes/heap/free:bytes"},
	}
	metrics.Read(samples)
	last := samples[0].Value.Uint64()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		metrics.Read(samples)
		cycles, free := samples[0].Value.Uint64(), samples[1].Value.Uint64()
		if cycles == last && free > slack {
			debug.FreeOSMemory()
			metrics.Read(samples)
			cycles = samples[0].Value.Uint64()
		}
		last = cycles
	}
}
