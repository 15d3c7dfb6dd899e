package transform

import (
	"fmt"
	"runtime/metrics"
	"time"
)

// DefaultMaxScriptMemory is the default of Options.MaxScriptMemory.
const DefaultMaxScriptMemory = 256 << 20

// ErrMemory: a script grew the heap past its memory cap.
var ErrMemory = fmt.Errorf("script memory cap exceeded")

// heapSample is the runtime metric the memory cap reads: bytes of heap
// objects, live or not yet swept, across the process.
const heapSample = "/memory/classes/heap/objects:bytes"

// heapBytes reads heapSample; the read is cheap (no stop-the-world).
func heapBytes(s []metrics.Sample) uint64 {
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// watchMemory calls stop when the process's heap grows more than limit
// bytes above what it was when the watch began, checking every
// interval, until the returned function is called. goja has no allocator
// hook, so the cap is enforced from outside: a script that builds ever
// larger strings or arrays is interrupted within a few milliseconds of
// crossing it. The measure is the process's heap, not the script's own,
// so other work allocating heavily at the same time counts against it;
// the default (256 MiB of growth) is far above what concurrent requests
// hold at once, and far below what takes a server down.
func watchMemory(limit uint64, interval time.Duration, stop func(error)) (cancel func()) {
	s := []metrics.Sample{{Name: heapSample}}
	base := heapBytes(s)
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if now := heapBytes(s); now > base && now-base > limit {
					stop(fmt.Errorf("the heap grew by %d MiB while the script ran, more than its cap of %d MiB: %w", (now-base)>>20, limit>>20, ErrMemory))
					return
				}
			}
		}
	}()
	return func() { close(done) }
}
