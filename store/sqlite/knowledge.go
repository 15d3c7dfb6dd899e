package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentcraftlab/agentcraft/store"
)

// KnowledgeBases implements store.Store.
func (s *Store) KnowledgeBases() store.KnowledgeBases { return knowledgeBases{s} }

// IngestJobs implements store.Store.
func (s *Store) IngestJobs() store.IngestJobs { return ingestJobs{s} }

type knowledgeBases struct{ s *Store }

const kbColumns = `id, workspace_id, name, description, index_name, settings,
	documents, chunks, expires_at, created_at, updated_at`

func scanKnowledgeBase(sc scanner) (store.KnowledgeBase, error) {
	var (
		kb               store.KnowledgeBase
		expires          sql.NullInt64
		created, updated int64
	)
	if err := sc.Scan(&kb.ID, &kb.WorkspaceID, &kb.Name, &kb.Description, &kb.IndexName,
		(*[]byte)(&kb.Settings), &kb.Documents, &kb.Chunks, &expires, &created, &updated); err != nil {
		return store.KnowledgeBase{}, err
	}
	if expires.Valid {
		kb.ExpiresAt = fromMicros(expires.Int64)
	}
	kb.CreatedAt = fromMicros(created)
	kb.UpdatedAt = fromMicros(updated)
	return kb, nil
}

// nullTime stores the zero time as NULL.
func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return micros(store.Timestamp(t))
}

func (r knowledgeBases) Create(ctx context.Context, kb store.KnowledgeBase) (store.KnowledgeBase, error) {
	if err := kb.Validate(); err != nil {
		return store.KnowledgeBase{}, fmt.Errorf("sqlite: create knowledge base: %w", err)
	}
	if kb.ID == "" {
		kb.ID = store.NewID()
	}
	kb.Settings = cloneJSON(kb.Settings)
	if !kb.ExpiresAt.IsZero() {
		kb.ExpiresAt = store.Timestamp(kb.ExpiresAt)
	}
	t := now()
	kb.CreatedAt, kb.UpdatedAt = t, t
	_, err := r.s.writer.ExecContext(ctx,
		`INSERT INTO knowledge_bases (`+kbColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		kb.ID, kb.WorkspaceID, kb.Name, kb.Description, kb.IndexName, nullJSON(kb.Settings),
		kb.Documents, kb.Chunks, nullTime(kb.ExpiresAt), micros(t), micros(t))
	if err != nil {
		return store.KnowledgeBase{}, fmt.Errorf("sqlite: create knowledge base %q: %w", kb.Name, mapErr(err))
	}
	return kb, nil
}

func (r knowledgeBases) Get(ctx context.Context, workspaceID, id string) (store.KnowledgeBase, error) {
	kb, err := scanKnowledgeBase(r.s.reader.QueryRowContext(ctx,
		`SELECT `+kbColumns+` FROM knowledge_bases WHERE workspace_id = ? AND id = ?`, workspaceID, id))
	if err != nil {
		return store.KnowledgeBase{}, fmt.Errorf("sqlite: get knowledge base %s: %w", id, mapErr(err))
	}
	return kb, nil
}

func (r knowledgeBases) GetByName(ctx context.Context, workspaceID, name string) (store.KnowledgeBase, error) {
	// The WHERE clause repeats the knowledge_bases_name index's.
	kb, err := scanKnowledgeBase(r.s.reader.QueryRowContext(ctx,
		`SELECT `+kbColumns+` FROM knowledge_bases
		WHERE workspace_id = ? AND name = ? AND expires_at IS NULL`, workspaceID, name))
	if err != nil {
		return store.KnowledgeBase{}, fmt.Errorf("sqlite: get knowledge base %q: %w", name, mapErr(err))
	}
	return kb, nil
}

func (r knowledgeBases) List(ctx context.Context, workspaceID string) ([]store.KnowledgeBase, error) {
	out, err := queryList(ctx, r.s.reader, scanKnowledgeBase,
		`SELECT `+kbColumns+` FROM knowledge_bases
		WHERE workspace_id = ? AND expires_at IS NULL ORDER BY name`, workspaceID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list knowledge bases: %w", err)
	}
	return out, nil
}

func (r knowledgeBases) Update(ctx context.Context, kb store.KnowledgeBase) (store.KnowledgeBase, error) {
	if err := kb.Validate(); err != nil {
		return store.KnowledgeBase{}, fmt.Errorf("sqlite: update knowledge base: %w", err)
	}
	got, err := scanKnowledgeBase(r.s.writer.QueryRowContext(ctx,
		`UPDATE knowledge_bases SET name = ?, description = ?, updated_at = ?
		WHERE workspace_id = ? AND id = ? RETURNING `+kbColumns,
		kb.Name, kb.Description, micros(now()), kb.WorkspaceID, kb.ID))
	if err != nil {
		return store.KnowledgeBase{}, fmt.Errorf("sqlite: update knowledge base %s: %w", kb.ID, mapErr(err))
	}
	return got, nil
}

// swapSettings compares and writes in one statement on the one writer
// connection, so no other write can come between.
const swapSettings = `UPDATE knowledge_bases SET settings = ?, documents = ?, chunks = ?, updated_at = ?
	WHERE workspace_id = ? AND id = ? AND settings IS ? RETURNING ` + kbColumns

// SwapSettings runs after every ingested file, so its statement is
// prepared once on the writer (see Store.writeStmt).
func (r knowledgeBases) SwapSettings(ctx context.Context, workspaceID, id string, prev, next json.RawMessage, documents, chunks int) (store.KnowledgeBase, error) {
	if documents < 0 || chunks < 0 {
		return store.KnowledgeBase{}, fmt.Errorf("sqlite: swap settings of knowledge base %s: %w: negative counts", id, store.ErrInvalid)
	}
	stmt, err := r.s.writeStmt(ctx, swapSettings)
	if err != nil {
		return store.KnowledgeBase{}, fmt.Errorf("sqlite: swap settings of knowledge base %s: prepare: %w", id, err)
	}
	got, err := scanKnowledgeBase(stmt.QueryRowContext(ctx,
		nullJSON(next), documents, chunks, micros(now()), workspaceID, id, nullJSON(prev)))
	if errors.Is(err, sql.ErrNoRows) {
		// Gone, or its settings changed since prev was read.
		if _, gerr := r.Get(ctx, workspaceID, id); gerr != nil {
			return store.KnowledgeBase{}, fmt.Errorf("sqlite: swap settings of knowledge base %s: %w", id, gerr)
		}
		return store.KnowledgeBase{}, fmt.Errorf("sqlite: swap settings of knowledge base %s: %w: its settings changed since they were read", id, store.ErrConflict)
	}
	if err != nil {
		return store.KnowledgeBase{}, fmt.Errorf("sqlite: swap settings of knowledge base %s: %w", id, mapErr(err))
	}
	return got, nil
}

func (r knowledgeBases) Delete(ctx context.Context, workspaceID, id string) error {
	// The ingest jobs go with it (ON DELETE CASCADE).
	res, err := r.s.writer.ExecContext(ctx, `DELETE FROM knowledge_bases WHERE workspace_id = ? AND id = ?`, workspaceID, id)
	if err == nil {
		err = rowsAffected(res)
	}
	if err != nil {
		return fmt.Errorf("sqlite: delete knowledge base %s: %w", id, mapErr(err))
	}
	return nil
}

func (r knowledgeBases) Expired(ctx context.Context, at time.Time, limit int) ([]store.KnowledgeBase, error) {
	if limit <= 0 {
		limit = 100
	}
	// The WHERE clause repeats the knowledge_bases_expiry index's.
	out, err := queryList(ctx, r.s.reader, scanKnowledgeBase,
		`SELECT `+kbColumns+` FROM knowledge_bases
		WHERE expires_at IS NOT NULL AND expires_at <= ? ORDER BY expires_at, id LIMIT ?`,
		micros(store.Timestamp(at)), limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list expired knowledge bases: %w", err)
	}
	return out, nil
}

type ingestJobs struct{ s *Store }

const ingestColumns = `id, workspace_id, kb_id, status, files, files_done, chunks, error, created_at, updated_at`

func scanIngestJob(sc scanner) (store.IngestJob, error) {
	var (
		j                store.IngestJob
		files            []byte
		created, updated int64
	)
	if err := sc.Scan(&j.ID, &j.WorkspaceID, &j.KnowledgeBaseID, &j.Status, &files,
		&j.FilesDone, &j.Chunks, &j.Error, &created, &updated); err != nil {
		return store.IngestJob{}, err
	}
	if err := json.Unmarshal(files, &j.Files); err != nil {
		return store.IngestJob{}, fmt.Errorf("decode files of ingest job %s: %w", j.ID, err)
	}
	j.CreatedAt = fromMicros(created)
	j.UpdatedAt = fromMicros(updated)
	return j, nil
}

// insertIngestJob selects from knowledge_bases, so one statement both checks
// that the base belongs to the workspace (no row inserted: ErrNotFound) and
// inserts the job.
const insertIngestJob = `INSERT INTO ingest_jobs (` + ingestColumns + `)
	SELECT ?, workspace_id, id, ?, ?, ?, ?, ?, ?, ? FROM knowledge_bases WHERE workspace_id = ? AND id = ?`

func (r ingestJobs) Create(ctx context.Context, j store.IngestJob) (store.IngestJob, error) {
	if j.Status == "" {
		j.Status = store.IngestQueued
	}
	if err := j.Validate(); err != nil {
		return store.IngestJob{}, fmt.Errorf("sqlite: create ingest job: %w", err)
	}
	if j.ID == "" {
		j.ID = store.NewID()
	}
	files, err := json.Marshal(j.Files)
	if err != nil {
		return store.IngestJob{}, fmt.Errorf("sqlite: create ingest job: encode files: %w", err)
	}
	j.Files = append([]store.IngestFile(nil), j.Files...)
	t := now()
	j.CreatedAt, j.UpdatedAt = t, t
	res, err := r.s.writer.ExecContext(ctx, insertIngestJob,
		j.ID, j.Status, string(files), j.FilesDone, j.Chunks, j.Error, micros(t), micros(t),
		j.WorkspaceID, j.KnowledgeBaseID)
	if err == nil {
		if err = rowsAffected(res); err != nil {
			err = fmt.Errorf("%w: knowledge base %s does not exist in the workspace", err, j.KnowledgeBaseID)
		}
	}
	if err != nil {
		return store.IngestJob{}, fmt.Errorf("sqlite: create ingest job: %w", mapErr(err))
	}
	return j, nil
}

func (r ingestJobs) Get(ctx context.Context, workspaceID, id string) (store.IngestJob, error) {
	j, err := scanIngestJob(r.s.reader.QueryRowContext(ctx,
		`SELECT `+ingestColumns+` FROM ingest_jobs WHERE workspace_id = ? AND id = ?`, workspaceID, id))
	if err != nil {
		return store.IngestJob{}, fmt.Errorf("sqlite: get ingest job %s: %w", id, mapErr(err))
	}
	return j, nil
}

// updateIngestJob leaves a job in a final state untouched: a worker that
// lost its lease cannot overwrite the outcome another one recorded.
const updateIngestJob = `UPDATE ingest_jobs
	SET status = ?, files = ?, files_done = ?, chunks = ?, error = ?, updated_at = ?
	WHERE workspace_id = ? AND id = ? AND status IN ('queued', 'running')
	RETURNING ` + ingestColumns

// Update reports progress after every file, so its statement is prepared
// once on the writer, as SwapSettings's is (BenchmarkIngestProgress).
func (r ingestJobs) Update(ctx context.Context, j store.IngestJob) (store.IngestJob, error) {
	if err := j.Validate(); err != nil {
		return store.IngestJob{}, fmt.Errorf("sqlite: update ingest job: %w", err)
	}
	files, err := json.Marshal(j.Files)
	if err != nil {
		return store.IngestJob{}, fmt.Errorf("sqlite: update ingest job %s: encode files: %w", j.ID, err)
	}
	stmt, err := r.s.writeStmt(ctx, updateIngestJob)
	if err != nil {
		return store.IngestJob{}, fmt.Errorf("sqlite: update ingest job %s: prepare: %w", j.ID, err)
	}
	got, err := scanIngestJob(stmt.QueryRowContext(ctx,
		j.Status, string(files), j.FilesDone, j.Chunks, j.Error, micros(now()), j.WorkspaceID, j.ID))
	if errors.Is(err, sql.ErrNoRows) {
		// Gone, or final: tell which.
		cur, gerr := r.Get(ctx, j.WorkspaceID, j.ID)
		if gerr != nil {
			return store.IngestJob{}, fmt.Errorf("sqlite: update ingest job %s: %w", j.ID, store.ErrNotFound)
		}
		return store.IngestJob{}, fmt.Errorf("sqlite: update ingest job %s: %w: job is already %s", j.ID, store.ErrConflict, cur.Status)
	}
	if err != nil {
		return store.IngestJob{}, fmt.Errorf("sqlite: update ingest job %s: %w", j.ID, mapErr(err))
	}
	return got, nil
}

func (r ingestJobs) List(ctx context.Context, workspaceID, kbID string, limit int) ([]store.IngestJob, error) {
	if limit <= 0 {
		limit = 100
	}
	out, err := queryList(ctx, r.s.reader, scanIngestJob,
		`SELECT `+ingestColumns+` FROM ingest_jobs
		WHERE workspace_id = ? AND kb_id = ? ORDER BY created_at DESC, id DESC LIMIT ?`,
		workspaceID, kbID, limit)
	if err == nil && len(out) == 0 {
		err = kbExists(ctx, r.s.reader, workspaceID, kbID)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: list ingest jobs of knowledge base %s: %w", kbID, err)
	}
	return out, nil
}

// kbExists returns ErrNotFound unless the workspace holds the knowledge base.
func kbExists(ctx context.Context, db queryRower, workspaceID, id string) error {
	var one int
	err := db.QueryRowContext(ctx, `SELECT 1 FROM knowledge_bases WHERE workspace_id = ? AND id = ?`, workspaceID, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: knowledge base %s does not exist in the workspace", store.ErrNotFound, id)
	}
	return err
}
