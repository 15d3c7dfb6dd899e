package store

import (
	"context"
	"time"
)

// IngestLive is a live (queued or running) ingest job with the executor
// that last claimed it: what a restarting process looks at to resume the
// jobs it was working when it died.
type IngestLive struct {
	WorkspaceID string       `json:"workspace_id"`
	ID          string       `json:"id"`
	Status      IngestStatus `json:"status"`
	// Owner is the executor of the last Claim; "" when never claimed.
	Owner     string    `json:"owner"`
	UpdatedAt time.Time `json:"updated_at"`
}

// IngestLeases records which executor works an ingest job. It is part of
// IngestJobs.
type IngestLeases interface {
	// Claim sets a queued or running job running, records owner as its
	// executor and stamps UpdatedAt; it returns the job as stored. A job
	// in a final state gives ErrConflict (and the job as stored); an
	// unknown one ErrNotFound. owner must not be empty.
	Claim(ctx context.Context, workspaceID, id, owner string) (IngestJob, error)
	// Live returns every queued or running ingest job of every
	// workspace, oldest first.
	Live(ctx context.Context) ([]IngestLive, error)
}
