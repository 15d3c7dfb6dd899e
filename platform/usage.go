package platform

import (
	"context"
	"log/slog"
	"time"

	"github.com/agentcraftlab/agentcraft/budget"
	"github.com/agentcraftlab/agentcraft/internal/batch"
	"github.com/agentcraftlab/agentcraft/store"
)

// usageRecorder writes usage records off the request path: requests hand
// records to a batcher, whose goroutine writes whatever has queued up in
// one transaction (at most 256), so a busy server pays one commit per
// batch rather than per request; the writer lingers usageLinger after a
// record for more, so a light steady load commits a few times a second
// rather than once per request (each SQLite commit costs about as much CPU
// as the request itself on a small machine). When the buffer is full the request
// writes its record itself, so records are never dropped and a slow
// database slows requests down instead of losing data.
type usageRecorder struct {
	b       *batch.Batcher[store.UsageRecord]
	budgets *budget.Enforcer
}

// usageLinger is how long a usage record may wait to be written with
// others; /api/usage lags the requests by at most this much.
const usageLinger = 250 * time.Millisecond

// The budget enforcer counts every record from the moment it is queued
// (Add) until the store holds it (Written), so that a workspace's spending
// is never missing the records still waiting in the buffer.
func newUsageRecorder(u store.Usage, budgets *budget.Enforcer, logger *slog.Logger) *usageRecorder {
	write := func(ctx context.Context, recs []store.UsageRecord) error {
		err := u.Record(ctx, recs...)
		if err == nil {
			budgets.Written(recs, true)
		}
		return err // a failed batch is retried record by record; OnDrop gets the rest
	}
	return &usageRecorder{budgets: budgets, b: batch.New(write, &batch.Options[store.UsageRecord]{
		WriteWhenFull: true,
		Linger:        usageLinger,
		OnDrop: func(rec store.UsageRecord, err error) {
			budgets.Written([]store.UsageRecord{rec}, false)
			logger.Error("usage_record_failed", "workspace_id", rec.WorkspaceID, "agent", rec.Agent, "error", err)
		},
	})}
}

func (r *usageRecorder) record(rec store.UsageRecord) {
	if rec.CreatedAt.IsZero() {
		rec.CreatedAt = time.Now()
	}
	r.budgets.Add(rec)
	r.b.Add(rec)
}

// stop drains the buffer and waits for the writer. Idempotent.
func (r *usageRecorder) stop() { r.b.Stop() }
