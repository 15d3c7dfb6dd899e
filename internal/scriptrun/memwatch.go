package scriptrun

import (
	"fmt"
	"runtime/metrics"
	"time"
)

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

// WatchHeap calls stop when the process's heap grows more than limit
// bytes above what it was when the watch began, checking every interval,
// until the returned function is called. The script engines (jsrun,
// starlarkrun) use it inside their sandbox child; other interpreters
// without an allocator hook (the json_query tool's jq) use it the same
// way. The measure is the process's heap, not the script's own, so other
// work allocating heavily at the same time counts against it: in a
// sandbox child there is none, and in a server the caps (64 to 256 MiB
// of growth) are far above what concurrent requests hold at once, and
// far below what takes it down.
func WatchHeap(limit uint64, interval time.Duration, stop func(error)) (cancel func()) {
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
					stop(fmt.Errorf("the heap grew by %d MiB during the run, more than the cap of %d MiB: %w", (now-base)>>20, limit>>20, ErrMemory))
					return
				}
			}
		}
	}()
	return func() { close(done) }
}
