package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// KnowledgeBase is a named collection of documents a workspace searches. Its
// chunks live in the search engine under IndexName; this row is the
// catalogue entry.
type KnowledgeBase struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspace_id"`
	// Name is unique within the workspace among persistent bases.
	// Temporary bases (ExpiresAt set) have generated names.
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// IndexName is the search index holding the chunks:
	// "{workspace}_kb_{id}" for persistent bases, "{workspace}_rag_{uuid}"
	// for temporary ones. Set by the caller (package kb) before Create.
	IndexName string `json:"index_name"`
	// Settings is a JSON object of ingestion settings (chunk size,
	// overlap, ...) owned by package kb; nil means defaults.
	Settings json.RawMessage `json:"settings,omitempty"`
	// Documents and Chunks count what has been ingested.
	Documents int `json:"documents"`
	Chunks    int `json:"chunks"`
	// ExpiresAt is set on temporary bases (uploads in a chat) and zero on
	// persistent ones.
	ExpiresAt time.Time `json:"expires_at,omitzero"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// KnowledgeSource is one file (or corpus) ingested into a knowledge base
// under its name, with what it produced, so that ingesting the name again
// can remove the search documents it no longer makes. Deleting the base
// deletes its sources.
type KnowledgeSource struct {
	KnowledgeBaseID string `json:"knowledge_base_id"`
	Name            string `json:"name"`
	// Documents and Chunks are what the source added to the base.
	Documents int `json:"documents"`
	Chunks    int `json:"chunks"`
	// Record is package kb's JSON object naming the search documents
	// the source produced.
	Record    json.RawMessage `json:"record,omitempty"`
	UpdatedAt time.Time       `json:"updated_at"`
}

// Validate checks what the store requires of a source.
func (s KnowledgeSource) Validate() error {
	switch {
	case s.KnowledgeBaseID == "":
		return fmt.Errorf("%w: knowledge source without a knowledge base id", ErrInvalid)
	case s.Name == "":
		return fmt.Errorf("%w: knowledge source without a name", ErrInvalid)
	case s.Documents < 0 || s.Chunks < 0:
		return fmt.Errorf("%w: knowledge source %q with negative counts", ErrInvalid, s.Name)
	case len(s.Record) > 0 && !json.Valid(s.Record):
		return fmt.Errorf("%w: knowledge source %q: record is not JSON", ErrInvalid, s.Name)
	}
	return nil
}

// Temporary reports whether kb expires.
func (kb KnowledgeBase) Temporary() bool { return !kb.ExpiresAt.IsZero() }

// Validate reports whether kb can be written.
func (kb KnowledgeBase) Validate() error {
	switch {
	case kb.WorkspaceID == "":
		return fmt.Errorf("%w: knowledge base workspace id is empty; set KnowledgeBase.WorkspaceID", ErrInvalid)
	case kb.Name == "":
		return fmt.Errorf("%w: knowledge base name is empty; set KnowledgeBase.Name", ErrInvalid)
	case kb.IndexName == "":
		return fmt.Errorf("%w: knowledge base %q has no index name; set KnowledgeBase.IndexName", ErrInvalid, kb.Name)
	case kb.Documents < 0 || kb.Chunks < 0:
		return fmt.Errorf("%w: knowledge base %q has negative counts (%d documents, %d chunks)", ErrInvalid, kb.Name, kb.Documents, kb.Chunks)
	}
	if len(kb.Settings) > 0 && !json.Valid(kb.Settings) {
		return fmt.Errorf("%w: knowledge base %q settings are not valid JSON", ErrInvalid, kb.Name)
	}
	return nil
}

// KnowledgeBases stores the catalogue of knowledge bases.
type KnowledgeBases interface {
	// Create inserts kb, assigning an ID when empty and stamping the
	// times. A persistent base whose name is taken in the workspace gives
	// ErrConflict; an unknown workspace ErrNotFound.
	Create(ctx context.Context, kb KnowledgeBase) (KnowledgeBase, error)
	// Get returns the workspace's base with id, or ErrNotFound.
	Get(ctx context.Context, workspaceID, id string) (KnowledgeBase, error)
	// GetByName returns the workspace's persistent base named name, or
	// ErrNotFound.
	GetByName(ctx context.Context, workspaceID, name string) (KnowledgeBase, error)
	// List returns the workspace's persistent bases ordered by name.
	List(ctx context.Context, workspaceID string) ([]KnowledgeBase, error)
	// Update rewrites Name and Description, and stamps UpdatedAt.
	// ErrNotFound or ErrConflict (name taken). Settings are set at Create.
	Update(ctx context.Context, kb KnowledgeBase) (KnowledgeBase, error)
	// GetSource returns the base's source named name, or ErrNotFound.
	GetSource(ctx context.Context, workspaceID, kbID, name string) (KnowledgeSource, error)
	// PutSource records src (by KnowledgeBaseID and Name, replacing the
	// one of that name) and sets the base's Documents and Chunks to the
	// sums over its sources, in one transaction: concurrent puts of
	// different sources, from any process, lose nothing. ErrNotFound when
	// the base is not the workspace's; ErrInvalid for a bad source.
	PutSource(ctx context.Context, workspaceID string, src KnowledgeSource) error
	// DeleteSource removes the base's source named name and recounts the
	// base like PutSource; ErrNotFound when there is none.
	DeleteSource(ctx context.Context, workspaceID, kbID, name string) error
	// ListSources returns the base's sources ordered by name; ErrNotFound
	// when the base is not the workspace's.
	ListSources(ctx context.Context, workspaceID, kbID string) ([]KnowledgeSource, error)
	// Delete removes the base and its ingest jobs, or gives ErrNotFound.
	// The caller drops the search index.
	Delete(ctx context.Context, workspaceID, id string) error
	// Expired returns temporary bases of every workspace whose ExpiresAt
	// is at or before now, oldest first, at most limit (100 when <= 0).
	Expired(ctx context.Context, now time.Time, limit int) ([]KnowledgeBase, error)
}

// IngestStatus is where an ingest job stands.
type IngestStatus string

// Ingest job states. Queued and Running are live; the others are final.
// Partial is a job that finished with some files failed (see the files'
// statuses) and others ingested.
const (
	IngestQueued    IngestStatus = "queued"
	IngestRunning   IngestStatus = "running"
	IngestSucceeded IngestStatus = "succeeded"
	IngestPartial   IngestStatus = "partial"
	IngestFailed    IngestStatus = "failed"
)

// Final reports whether s is a final state.
func (s IngestStatus) Final() bool {
	return s == IngestSucceeded || s == IngestPartial || s == IngestFailed
}

// IngestFile is one input of an ingest job: an upload and what became of it.
type IngestFile struct {
	UploadID string `json:"upload_id"`
	Name     string `json:"name"`
	// Status is "" until processed, then "ok", "skipped" or "failed".
	Status string `json:"status,omitempty"`
	// Documents and Chunks count what the file produced.
	Documents int    `json:"documents,omitempty"`
	Chunks    int    `json:"chunks,omitempty"`
	Error     string `json:"error,omitempty"`
}

// IngestJob is one ingestion of uploaded files into a knowledge base, run
// by a worker from the job queue. Its row is the progress record the SSE
// stream reports from.
type IngestJob struct {
	ID              string       `json:"id"`
	WorkspaceID     string       `json:"workspace_id"`
	KnowledgeBaseID string       `json:"kb_id"`
	Status          IngestStatus `json:"status"`
	Files           []IngestFile `json:"files"`
	// FilesDone counts processed files; Chunks the chunks indexed so far.
	FilesDone int       `json:"files_done"`
	Chunks    int       `json:"chunks"`
	Error     string    `json:"error,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Validate reports whether j can be written.
func (j IngestJob) Validate() error {
	switch {
	case j.WorkspaceID == "":
		return fmt.Errorf("%w: ingest job workspace id is empty", ErrInvalid)
	case j.KnowledgeBaseID == "":
		return fmt.Errorf("%w: ingest job knowledge base id is empty", ErrInvalid)
	case len(j.Files) == 0:
		return fmt.Errorf("%w: ingest job has no files", ErrInvalid)
	}
	switch j.Status {
	case IngestQueued, IngestRunning, IngestSucceeded, IngestPartial, IngestFailed:
	default:
		return fmt.Errorf("%w: ingest job status %q is unknown", ErrInvalid, j.Status)
	}
	return nil
}

// IngestJobs stores ingest jobs.
type IngestJobs interface {
	// Create inserts j (Status defaults to IngestQueued), assigning an ID
	// when empty. An unknown workspace or knowledge base gives
	// ErrNotFound.
	Create(ctx context.Context, j IngestJob) (IngestJob, error)
	// Get returns the workspace's job with id, or ErrNotFound.
	Get(ctx context.Context, workspaceID, id string) (IngestJob, error)
	// Update rewrites Status, Files, FilesDone, Chunks and Error and
	// stamps UpdatedAt; ErrNotFound when the job is gone. A job already in
	// a final state gives ErrConflict.
	Update(ctx context.Context, j IngestJob) (IngestJob, error)
	// List returns the jobs of a knowledge base, newest first, at most
	// limit (100 when <= 0). An unknown knowledge base gives ErrNotFound.
	List(ctx context.Context, workspaceID, kbID string, limit int) ([]IngestJob, error)
	IngestLeases
}
