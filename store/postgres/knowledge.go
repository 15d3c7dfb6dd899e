package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/store"
)

// KnowledgeBases implements store.Store.
func (s *Store) KnowledgeBases() store.KnowledgeBases { return knowledgeBases{s} }

// IngestJobs implements store.Store.
func (s *Store) IngestJobs() store.IngestJobs { return ingestJobs{s} }

type knowledgeBases struct{ s *Store }

const kbColumns = `id, workspace_id, name, description, index_name, settings,
	documents, chunks, expires_at, created_at, updated_at`

func scanKnowledgeBase(row pgx.Row) (store.KnowledgeBase, error) {
	var (
		kb      store.KnowledgeBase
		expires *time.Time
	)
	if err := row.Scan(&kb.ID, &kb.WorkspaceID, &kb.Name, &kb.Description, &kb.IndexName,
		(*[]byte)(&kb.Settings), &kb.Documents, &kb.Chunks, &expires, &kb.CreatedAt, &kb.UpdatedAt); err != nil {
		return store.KnowledgeBase{}, err
	}
	if expires != nil {
		kb.ExpiresAt = expires.UTC()
	}
	kb.CreatedAt, kb.UpdatedAt = kb.CreatedAt.UTC(), kb.UpdatedAt.UTC()
	return kb, nil
}

// nullTime stores the zero time as NULL.
func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = store.Timestamp(t)
	return &t
}

// RETURNING the row hands back the settings as jsonb formats them, which is
// what a later read returns.
func (r knowledgeBases) Create(ctx context.Context, kb store.KnowledgeBase) (store.KnowledgeBase, error) {
	if err := kb.Validate(); err != nil {
		return store.KnowledgeBase{}, fmt.Errorf("postgres: create knowledge base: %w", err)
	}
	if kb.ID == "" {
		kb.ID = store.NewID()
	}
	t := now()
	got, err := scanKnowledgeBase(r.s.pool.QueryRow(ctx,
		`INSERT INTO knowledge_bases (`+kbColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)
		RETURNING `+kbColumns,
		kb.ID, kb.WorkspaceID, kb.Name, kb.Description, kb.IndexName, nullJSON(kb.Settings),
		kb.Documents, kb.Chunks, nullTime(kb.ExpiresAt), t))
	if err != nil {
		return store.KnowledgeBase{}, fmt.Errorf("postgres: create knowledge base %q: %w", kb.Name, mapErr(err))
	}
	return got, nil
}

func (r knowledgeBases) Get(ctx context.Context, workspaceID, id string) (store.KnowledgeBase, error) {
	kb, err := scanKnowledgeBase(r.s.pool.QueryRow(ctx,
		`SELECT `+kbColumns+` FROM knowledge_bases WHERE workspace_id = $1 AND id = $2`, workspaceID, id))
	if err != nil {
		return store.KnowledgeBase{}, fmt.Errorf("postgres: get knowledge base %s: %w", id, mapErr(err))
	}
	return kb, nil
}

func (r knowledgeBases) GetByName(ctx context.Context, workspaceID, name string) (store.KnowledgeBase, error) {
	// The WHERE clause repeats the knowledge_bases_name index's.
	kb, err := scanKnowledgeBase(r.s.pool.QueryRow(ctx,
		`SELECT `+kbColumns+` FROM knowledge_bases
		WHERE workspace_id = $1 AND name = $2 AND expires_at IS NULL`, workspaceID, name))
	if err != nil {
		return store.KnowledgeBase{}, fmt.Errorf("postgres: get knowledge base %q: %w", name, mapErr(err))
	}
	return kb, nil
}

func (r knowledgeBases) List(ctx context.Context, workspaceID string) ([]store.KnowledgeBase, error) {
	// COLLATE "C" sorts by bytes, as SQLite does.
	out, err := queryList(ctx, r.s, scanKnowledgeBase,
		`SELECT `+kbColumns+` FROM knowledge_bases
		WHERE workspace_id = $1 AND expires_at IS NULL ORDER BY name COLLATE "C"`, workspaceID)
	if err != nil {
		return nil, fmt.Errorf("postgres: list knowledge bases: %w", err)
	}
	return out, nil
}

func (r knowledgeBases) Update(ctx context.Context, kb store.KnowledgeBase) (store.KnowledgeBase, error) {
	if err := kb.Validate(); err != nil {
		return store.KnowledgeBase{}, fmt.Errorf("postgres: update knowledge base: %w", err)
	}
	got, err := scanKnowledgeBase(r.s.pool.QueryRow(ctx,
		`UPDATE knowledge_bases SET name = $1, description = $2, updated_at = $3
		WHERE workspace_id = $4 AND id = $5 RETURNING `+kbColumns,
		kb.Name, kb.Description, now(), kb.WorkspaceID, kb.ID))
	if err != nil {
		return store.KnowledgeBase{}, fmt.Errorf("postgres: update knowledge base %s: %w", kb.ID, mapErr(err))
	}
	return got, nil
}

// SwapSettings compares and writes in one statement: a concurrent swap
// waits on the row lock and then finds the settings changed. jsonb
// compares by value, so prev need not keep the stored formatting.
func (r knowledgeBases) SwapSettings(ctx context.Context, workspaceID, id string, prev, next json.RawMessage, documents, chunks int) (store.KnowledgeBase, error) {
	if documents < 0 || chunks < 0 {
		return store.KnowledgeBase{}, fmt.Errorf("postgres: swap settings of knowledge base %s: %w: negative counts", id, store.ErrInvalid)
	}
	got, err := scanKnowledgeBase(r.s.pool.QueryRow(ctx,
		`UPDATE knowledge_bases SET settings = $1, documents = $2, chunks = $3, updated_at = $4
		WHERE workspace_id = $5 AND id = $6 AND settings IS NOT DISTINCT FROM $7::jsonb RETURNING `+kbColumns,
		nullJSON(next), documents, chunks, now(), workspaceID, id, nullJSON(prev)))
	if errors.Is(err, pgx.ErrNoRows) {
		// Gone, or its settings changed since prev was read.
		if _, gerr := r.Get(ctx, workspaceID, id); gerr != nil {
			return store.KnowledgeBase{}, fmt.Errorf("postgres: swap settings of knowledge base %s: %w", id, gerr)
		}
		return store.KnowledgeBase{}, fmt.Errorf("postgres: swap settings of knowledge base %s: %w: its settings changed since they were read", id, store.ErrConflict)
	}
	if err != nil {
		return store.KnowledgeBase{}, fmt.Errorf("postgres: swap settings of knowledge base %s: %w", id, mapErr(err))
	}
	return got, nil
}

func (r knowledgeBases) Delete(ctx context.Context, workspaceID, id string) error {
	// The ingest jobs go with it (ON DELETE CASCADE).
	tag, err := r.s.pool.Exec(ctx, `DELETE FROM knowledge_bases WHERE workspace_id = $1 AND id = $2`, workspaceID, id)
	if err == nil {
		err = affected(tag)
	}
	if err != nil {
		return fmt.Errorf("postgres: delete knowledge base %s: %w", id, mapErr(err))
	}
	return nil
}

func (r knowledgeBases) Expired(ctx context.Context, at time.Time, limit int) ([]store.KnowledgeBase, error) {
	if limit <= 0 {
		limit = 100
	}
	// The WHERE clause repeats the knowledge_bases_expiry index's.
	out, err := queryList(ctx, r.s, scanKnowledgeBase,
		`SELECT `+kbColumns+` FROM knowledge_bases
		WHERE expires_at IS NOT NULL AND expires_at <= $1 ORDER BY expires_at, id COLLATE "C" LIMIT $2`,
		store.Timestamp(at), limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: list expired knowledge bases: %w", err)
	}
	return out, nil
}

type ingestJobs struct{ s *Store }

const ingestColumns = `id, workspace_id, kb_id, status, files, files_done, chunks, error, created_at, updated_at`

func scanIngestJob(row pgx.Row) (store.IngestJob, error) {
	var (
		j     store.IngestJob
		files []byte
	)
	if err := row.Scan(&j.ID, &j.WorkspaceID, &j.KnowledgeBaseID, &j.Status, &files,
		&j.FilesDone, &j.Chunks, &j.Error, &j.CreatedAt, &j.UpdatedAt); err != nil {
		return store.IngestJob{}, err
	}
	if err := json.Unmarshal(files, &j.Files); err != nil {
		return store.IngestJob{}, fmt.Errorf("decode files of ingest job %s: %w", j.ID, err)
	}
	j.CreatedAt, j.UpdatedAt = j.CreatedAt.UTC(), j.UpdatedAt.UTC()
	return j, nil
}

// insertIngestJob selects from knowledge_bases, so one statement both checks
// that the base belongs to the workspace (no row: ErrNotFound) and inserts
// the job. The casts type the parameters, which a SELECT list leaves
// unknown.
const insertIngestJob = `INSERT INTO ingest_jobs (` + ingestColumns + `)
	SELECT $1::text, workspace_id, id, $2::text, $3::jsonb, $4::integer, $5::integer, $6::text, $7::timestamptz, $7::timestamptz
	FROM knowledge_bases WHERE workspace_id = $8 AND id = $9
	RETURNING ` + ingestColumns

func (r ingestJobs) Create(ctx context.Context, j store.IngestJob) (store.IngestJob, error) {
	if j.Status == "" {
		j.Status = store.IngestQueued
	}
	if err := j.Validate(); err != nil {
		return store.IngestJob{}, fmt.Errorf("postgres: create ingest job: %w", err)
	}
	if j.ID == "" {
		j.ID = store.NewID()
	}
	files, err := json.Marshal(j.Files)
	if err != nil {
		return store.IngestJob{}, fmt.Errorf("postgres: create ingest job: encode files: %w", err)
	}
	got, err := scanIngestJob(r.s.pool.QueryRow(ctx, insertIngestJob,
		j.ID, string(j.Status), files, j.FilesDone, j.Chunks, j.Error, now(), j.WorkspaceID, j.KnowledgeBaseID))
	if errors.Is(err, pgx.ErrNoRows) {
		err = fmt.Errorf("%w: knowledge base %s does not exist in the workspace", store.ErrNotFound, j.KnowledgeBaseID)
	}
	if err != nil {
		return store.IngestJob{}, fmt.Errorf("postgres: create ingest job: %w", mapErr(err))
	}
	return got, nil
}

func (r ingestJobs) Get(ctx context.Context, workspaceID, id string) (store.IngestJob, error) {
	j, err := scanIngestJob(r.s.pool.QueryRow(ctx,
		`SELECT `+ingestColumns+` FROM ingest_jobs WHERE workspace_id = $1 AND id = $2`, workspaceID, id))
	if err != nil {
		return store.IngestJob{}, fmt.Errorf("postgres: get ingest job %s: %w", id, mapErr(err))
	}
	return j, nil
}

// Update leaves a job in a final state untouched: a worker that lost its
// lease cannot overwrite the outcome another one recorded. A concurrent
// Update waits on the row lock and re-checks the status against the new
// row.
func (r ingestJobs) Update(ctx context.Context, j store.IngestJob) (store.IngestJob, error) {
	if err := j.Validate(); err != nil {
		return store.IngestJob{}, fmt.Errorf("postgres: update ingest job: %w", err)
	}
	files, err := json.Marshal(j.Files)
	if err != nil {
		return store.IngestJob{}, fmt.Errorf("postgres: update ingest job %s: encode files: %w", j.ID, err)
	}
	got, err := scanIngestJob(r.s.pool.QueryRow(ctx,
		`UPDATE ingest_jobs SET status = $1, files = $2, files_done = $3, chunks = $4, error = $5, updated_at = $6
		WHERE workspace_id = $7 AND id = $8 AND status IN ('queued', 'running')
		RETURNING `+ingestColumns,
		string(j.Status), files, j.FilesDone, j.Chunks, j.Error, now(), j.WorkspaceID, j.ID))
	if errors.Is(err, pgx.ErrNoRows) {
		// Gone, or final: tell which.
		cur, gerr := r.Get(ctx, j.WorkspaceID, j.ID)
		if gerr != nil {
			return store.IngestJob{}, fmt.Errorf("postgres: update ingest job %s: %w", j.ID, store.ErrNotFound)
		}
		return store.IngestJob{}, fmt.Errorf("postgres: update ingest job %s: %w: job is already %s", j.ID, store.ErrConflict, cur.Status)
	}
	if err != nil {
		return store.IngestJob{}, fmt.Errorf("postgres: update ingest job %s: %w", j.ID, mapErr(err))
	}
	return got, nil
}

func (r ingestJobs) List(ctx context.Context, workspaceID, kbID string, limit int) ([]store.IngestJob, error) {
	if limit <= 0 {
		limit = 100
	}
	out, err := queryList(ctx, r.s, scanIngestJob,
		`SELECT `+ingestColumns+` FROM ingest_jobs
		WHERE workspace_id = $1 AND kb_id = $2 ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT $3`,
		workspaceID, kbID, limit)
	if err == nil && len(out) == 0 {
		err = r.kbExists(ctx, workspaceID, kbID)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: list ingest jobs of knowledge base %s: %w", kbID, err)
	}
	return out, nil
}

// kbExists returns ErrNotFound unless the workspace holds the knowledge base.
func (r ingestJobs) kbExists(ctx context.Context, workspaceID, id string) error {
	var one int
	err := r.s.pool.QueryRow(ctx, `SELECT 1 FROM knowledge_bases WHERE workspace_id = $1 AND id = $2`, workspaceID, id).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%w: knowledge base %s does not exist in the workspace", store.ErrNotFound, id)
	}
	return err
}
