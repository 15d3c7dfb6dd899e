package audit

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/agentcraftlab/agentcraft/internal/batch"
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
	b       *batch.Batcher[store.AuditEvent]
	logger  *slog.Logger
	invalid atomic.Int64 // events Record refused before queueing them
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
	r := &AsyncRecorder{logger: o.Logger}
	r.b = batch.New(func(ctx context.Context, events []store.AuditEvent) error {
		return log.Append(ctx, events...)
	}, &batch.Options[store.AuditEvent]{
		Buffer: o.Buffer, MaxBatch: o.MaxBatch, WriteTimeout: o.WriteTimeout,
		OnDrop: r.dropped,
	})
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
		r.invalid.Add(1)
		r.logger.Error("audit_event_invalid", "action", e.Action, "workspace_id", e.WorkspaceID, "error", err)
		return
	}
	r.b.Add(e)
}

// dropped reports an event the batcher did not write.
func (r *AsyncRecorder) dropped(e store.AuditEvent, err error) {
	if errors.Is(err, batch.ErrFull) {
		r.logger.Error("audit_event_dropped", "action", e.Action, "workspace_id", e.WorkspaceID,
			"dropped_total", r.Dropped(), "reason", "audit buffer full; the database is too slow or down")
		return
	}
	r.logger.Error("audit_write_failed", "action", e.Action, "workspace_id", e.WorkspaceID, "error", err)
}

// Dropped is how many events were not written: the buffer was full, the
// event was invalid, or the store refused it.
func (r *AsyncRecorder) Dropped() int64 { return r.invalid.Load() + r.b.Dropped() }

// Stop writes what is queued and waits for the writer. Idempotent.
func (r *AsyncRecorder) Stop() { r.b.Stop() }

// Nop is a Recorder that discards every event.
type Nop struct{}

// Record implements Recorder.
func (Nop) Record(context.Context, store.AuditEvent) {}
