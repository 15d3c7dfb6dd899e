package platform

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/agentcraftlab/agentcraft/store"
)

// usageRecorder writes usage records off the request path: requests hand
// records to a buffered channel and one goroutine writes whatever has
// queued up in one transaction (at most maxUsageBatch), so a busy server
// pays one commit per batch rather than per request. When the buffer is
// full the request writes its record itself, so records are never dropped
// and a slow database slows requests down instead of losing data.
type usageRecorder struct {
	usage  store.Usage
	logger *slog.Logger
	ch     chan store.UsageRecord
	wg     sync.WaitGroup

	mu     sync.RWMutex // guards closed against a send on the closed ch
	closed bool
}

func newUsageRecorder(u store.Usage, logger *slog.Logger) *usageRecorder {
	r := &usageRecorder{usage: u, logger: logger, ch: make(chan store.UsageRecord, 1024)}
	r.wg.Add(1)
	go r.loop()
	return r
}

func (r *usageRecorder) record(rec store.UsageRecord) {
	if rec.CreatedAt.IsZero() {
		rec.CreatedAt = time.Now()
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.closed {
		r.write(rec)
		return
	}
	select {
	case r.ch <- rec:
	default:
		r.write(rec)
	}
}

// maxUsageBatch bounds one transaction of the recorder.
const maxUsageBatch = 256

func (r *usageRecorder) loop() {
	defer r.wg.Done()
	batch := make([]store.UsageRecord, 0, maxUsageBatch)
	for rec := range r.ch {
		batch = append(batch[:0], rec)
	drain:
		for len(batch) < maxUsageBatch {
			select {
			case more, ok := <-r.ch:
				if !ok {
					break drain
				}
				batch = append(batch, more)
			default:
				break drain
			}
		}
		r.write(batch...)
	}
}

func (r *usageRecorder) write(recs ...store.UsageRecord) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.usage.Record(ctx, recs...); err != nil {
		// One bad record must not lose the others of its batch.
		if len(recs) > 1 {
			for _, rec := range recs {
				r.write(rec)
			}
			return
		}
		r.logger.Error("usage_record_failed", "workspace_id", recs[0].WorkspaceID, "agent", recs[0].Agent, "error", err)
	}
}

// stop drains the buffer and waits for the writer. Idempotent.
func (r *usageRecorder) stop() {
	r.mu.Lock()
	if !r.closed {
		r.closed = true
		close(r.ch)
	}
	r.mu.Unlock()
	r.wg.Wait()
}
