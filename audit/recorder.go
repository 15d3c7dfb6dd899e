package audit

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentcraftlab/agentcraft/store"
)

// Recorder takes audit events. Record must not block its caller for long
// nor fail it: the audit log is a record of the work, not a part of it.
// An event's empty WorkspaceID and Actor are taken from ctx (WithScope).
type Recorder interface {
	Record(ctx context.Context, e store.AuditEvent)
}

// Options configure an AsyncRecorder. The zero value (or nil) is the
// default.
type Options struct {
	// Logger receives failed writes and dropped events at Error. Default:
	// discard.
	Logger *slog.Logger
	// Buffer is how many events may wait to be written. Default 16384:
	// a burst of blocked requests against a database that is down for
	// seconds fits.
	Buffer int
	// MaxBatch bounds one transaction. Default 256.
	MaxBatch int
	// WriteTimeout bounds one write. Default 10 s.
	WriteTimeout time.Duration
}

// AsyncRecorder writes audit events off the request path: Record puts the
// event in a buffered channel and one goroutine writes whatever has queued
// up in one transaction, so a busy server pays one commit per batch rather
// than per event. When the buffer is full the event is dropped, counted
// (Dropped) and reported at Error: a slow database must not stall requests.
// Stop flushes the buffer.
type AsyncRecorder struct {
	log   store.AuditLog
	o     Options
	ch    chan store.AuditEvent
	wg    sync.WaitGroup
	drops atomic.Int64

	mu     sync.RWMutex // guards closed against a send on the closed ch
	closed bool
}

var _ Recorder = (*AsyncRecorder)(nil)

// NewAsyncRecorder starts a recorder writing to log. Stop it with Stop.
func NewAsyncRecorder(log store.AuditLog, opts *Options) *AsyncRecorder {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Buffer <= 0 {
		o.Buffer = 16384
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = 256
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 10 * time.Second
	}
	r := &AsyncRecorder{log: log, o: o, ch: make(chan store.AuditEvent, o.Buffer)}
	r.wg.Add(1)
	go r.loop()
	return r
}

// Record queues e. It stamps CreatedAt now (when zero), so the event keeps
// the time it happened rather than the time it was written, and fills
// WorkspaceID and Actor from ctx. An invalid event is reported and dropped.
// After Stop, Record writes synchronously.
func (r *AsyncRecorder) Record(ctx context.Context, e store.AuditEvent) {
	Fill(ctx, &e)
	if e.CreatedAt.IsZero() {
		e.CreatedAt = time.Now()
	}
	if e.ID == "" {
		// Assigned here, not by the store, so that a batch retried
		// event by event cannot store an event twice.
		e.ID = store.NewID()
	}
	if err := e.Validate(); err != nil {
		r.drops.Add(1)
		r.o.Logger.Error("audit_event_invalid", "action", e.Action, "workspace_id", e.WorkspaceID, "error", err)
		return
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.closed {
		r.write(e)
		return
	}
	select {
	case r.ch <- e:
	default:
		n := r.drops.Add(1)
		r.o.Logger.Error("audit_event_dropped", "action", e.Action, "workspace_id", e.WorkspaceID,
			"dropped_total", n, "reason", "audit buffer full; the database is too slow or down")
	}
}

// Dropped is how many events were not written: the buffer was full, the
// event was invalid, or the store refused it.
func (r *AsyncRecorder) Dropped() int64 { return r.drops.Load() }

func (r *AsyncRecorder) loop() {
	defer r.wg.Done()
	batch := make([]store.AuditEvent, 0, r.o.MaxBatch)
	for e := range r.ch {
		batch = append(batch[:0], e)
	drain:
		for len(batch) < r.o.MaxBatch {
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

func (r *AsyncRecorder) write(events ...store.AuditEvent) {
	ctx, cancel := context.WithTimeout(context.Background(), r.o.WriteTimeout)
	defer cancel()
	if err := r.log.Append(ctx, events...); err != nil {
		// One bad event (its workspace deleted meanwhile) must not lose
		// the others of its batch.
		if len(events) > 1 {
			for _, e := range events {
				r.write(e)
			}
			return
		}
		r.drops.Add(1)
		r.o.Logger.Error("audit_write_failed", "action", events[0].Action, "workspace_id", events[0].WorkspaceID, "error", err)
	}
}

// Stop writes what is queued and waits for the writer. Idempotent.
func (r *AsyncRecorder) Stop() {
	r.mu.Lock()
	if !r.closed {
		r.closed = true
		close(r.ch)
	}
	r.mu.Unlock()
	r.wg.Wait()
}

// Nop is a Recorder that discards every event.
type Nop struct{}

// Record implements Recorder.
func (Nop) Record(context.Context, store.AuditEvent) {}
