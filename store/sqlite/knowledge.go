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

// recount sets a base's counts to the sums over its sources.
const recount = `UPDATE knowledge_bases SET
	documents = (SELECT coalesce(sum(documents), 0) FROM kb_sources WHERE kb_id = ?1),
	chunks = (SELECT coalesce(sum(chunks), 0) FROM kb_sources WHERE kb_id = ?1),
	updated_at = ?2
	WHERE id = ?1`

func scanSource(sc scanner) (store.KnowledgeSource, error) {
	var (
		src     store.KnowledgeSource
		updated int64
	)
	if err := sc.Scan(&src.KnowledgeBaseID, &src.Name, &src.Documents, &src.Chunks, (*[]byte)(&src.Record), &updated); err != nil {
		return store.KnowledgeSource{}, err
	}
	src.UpdatedAt = fromMicros(updated)
	return src, nil
}

const sourceColumns = `s.kb_id, s.name, s.documents, s.chunks, s.record, s.updated_at`

func (r knowledgeBases) GetSource(ctx context.Context, workspaceID, kbID, name string) (store.KnowledgeSource, error) {
	src, err := scanSource(r.s.reader.QueryRowContext(ctx,
		`SELECT `+sourceColumns+` FROM kb_sources s JOIN knowledge_bases kb ON kb.id = s.kb_id
		WHERE kb.workspace_id = ? AND s.kb_id = ? AND s.name = ?`, workspaceID, kbID, name))
	if err != nil {
		return store.KnowledgeSource{}, fmt.Errorf("sqlite: get source %q of knowledge base %s: %w", name, kbID, mapErr(err))
	}
	return src, nil
}

// PutSource is one transaction on the one writer connection, so the
// recount sees every committed source.
func (r knowledgeBases) PutSource(ctx context.Context, workspaceID string, src store.KnowledgeSource) error {
	if err := src.Validate(); err != nil {
		return fmt.Errorf("sqlite: put knowledge source: %w", err)
	}
	err := r.s.writeTx(ctx, func(tx *sql.Tx) error {
		if err := kbExists(ctx, tx, workspaceID, src.KnowledgeBaseID); err != nil {
			return err
		}
		at := micros(now())
		if _, err := tx.ExecContext(ctx, `INSERT INTO kb_sources (kb_id, name, documents, chunks, record, updated_at)
			VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (kb_id, name) DO UPDATE SET documents = excluded.documents, chunks = excluded.chunks,
				record = excluded.record, updated_at = excluded.updated_at`,
			src.KnowledgeBaseID, src.Name, src.Documents, src.Chunks, nullJSON(src.Record), at); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, recount, src.KnowledgeBaseID, at)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: put source %q of knowledge base %s: %w", src.Name, src.KnowledgeBaseID, mapErr(err))
	}
	return nil
}

func (r knowledgeBases) DeleteSource(ctx context.Context, workspaceID, kbID, name string) error {
	err := r.s.writeTx(ctx, func(tx *sql.Tx) error {
		if err := kbExists(ctx, tx, workspaceID, kbID); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM kb_sources WHERE kb_id = ? AND name = ?`, kbID, name)
		if err == nil {
			err = rowsAffected(res)
		}
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, recount, kbID, micros(now()))
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: delete source %q of knowledge base %s: %w", name, kbID, mapErr(err))
	}
	return nil
}

func (r knowledgeBases) ListSources(ctx context.Context, workspaceID, kbID string) ([]store.KnowledgeSource, error) {
	if err := kbExists(ctx, r.s.reader, workspaceID, kbID); err != nil {
		return nil, fmt.Errorf("sqlite: list sources of knowledge base %s: %w", kbID, err)
	}
	out, err := queryList(ctx, r.s.reader, scanSource,
		`SELECT `+sourceColumns+` FROM kb_sources s WHERE s.kb_id = ? ORDER BY s.name`, kbID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list sources of knowledge base %s: %w", kbID, err)
	}
	return out, nil
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
// once on the writer (BenchmarkIngestProgress).
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
