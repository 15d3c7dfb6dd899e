package platform

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/agentcraftlab/agentcraft/store"
)

// usageRecorder writes usage records off the request path: requests hand
// records to a buffered channel and one goroutine writes them. When the
// buffer is full the request writes its record itself, so records are never
// dropped and a slow database slows requests down instead of losing data.
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

func (r *usageRecorder) loop() {
	defer r.wg.Done()
	for rec := range r.ch {
		r.write(rec)
	}
}

func (r *usageRecorder) write(rec store.UsageRecord) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.usage.Record(ctx, rec); err != nil {
		r.logger.Error("usage_record_failed", "workspace_id", rec.WorkspaceID, "agent", rec.Agent, "error", err)
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
