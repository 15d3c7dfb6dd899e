package store

import "context"

// DefaultCheckpointPage is the page size of CheckpointPage when limit is
// 0; MaxCheckpointPage caps it.
const (
	DefaultCheckpointPage = 100
	MaxCheckpointPage     = 1000
)

// RunPages reads a run's stored data a page at a time, and sizes it, so
// that a run with many thousands of checkpoints is neither sent nor
// loaded whole. It is part of Runs.
type RunPages interface {
	// CheckpointPage returns up to limit (0: DefaultCheckpointPage, at
	// most MaxCheckpointPage) of the run's checkpoints saved after cursor
	// (0: from the first), in the order they were saved, and the cursor
	// of the next page: 0 when this page is the last. An unknown run
	// gives ErrNotFound.
	CheckpointPage(ctx context.Context, workspaceID, runID string, cursor int64, limit int) ([]Checkpoint, int64, error)
	// StoredBytes returns how many bytes of run data the workspace's runs
	// hold: checkpoint outputs and event data.
	StoredBytes(ctx context.Context, workspaceID string) (int64, error)
}
