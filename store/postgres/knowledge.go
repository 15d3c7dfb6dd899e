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

// recount sets a base's counts to the sums over its sources.
const recount = `UPDATE knowledge_bases SET
	documents = (SELECT coalesce(sum(documents), 0) FROM kb_sources WHERE kb_id = $1),
	chunks = (SELECT coalesce(sum(chunks), 0) FROM kb_sources WHERE kb_id = $1),
	updated_at = $2
	WHERE id = $1`

// lockBase takes the base's row lock for the transaction, or reports
// ErrNotFound unless the base is the workspace's. Puts and deletes of a
// base's sources then run one after the other, and each recount (a new
// snapshot per statement) sees the sources the others committed.
func lockBase(ctx context.Context, tx pgx.Tx, workspaceID, kbID string) error {
	var one int
	err := tx.QueryRow(ctx, `SELECT 1 FROM knowledge_bases WHERE workspace_id = $1 AND id = $2 FOR UPDATE`, workspaceID, kbID).Scan(&one)
	return mapErr(err)
}

func scanSource(row pgx.Row) (store.KnowledgeSource, error) {
	var src store.KnowledgeSource
	if err := row.Scan(&src.KnowledgeBaseID, &src.Name, &src.Documents, &src.Chunks, (*[]byte)(&src.Record), &src.UpdatedAt); err != nil {
		return store.KnowledgeSource{}, err
	}
	src.UpdatedAt = src.UpdatedAt.UTC()
	return src, nil
}

const sourceColumns = `s.kb_id, s.name, s.documents, s.chunks, s.record, s.updated_at`

func (r knowledgeBases) GetSource(ctx context.Context, workspaceID, kbID, name string) (store.KnowledgeSource, error) {
	src, err := scanSource(r.s.pool.QueryRow(ctx,
		`SELECT `+sourceColumns+` FROM kb_sources s JOIN knowledge_bases kb ON kb.id = s.kb_id
		WHERE kb.workspace_id = $1 AND s.kb_id = $2 AND s.name = $3`, workspaceID, kbID, name))
	if err != nil {
		return store.KnowledgeSource{}, fmt.Errorf("postgres: get source %q of knowledge base %s: %w", name, kbID, mapErr(err))
	}
	return src, nil
}

func (r knowledgeBases) PutSource(ctx context.Context, workspaceID string, src store.KnowledgeSource) error {
	if err := src.Validate(); err != nil {
		return fmt.Errorf("postgres: put knowledge source: %w", err)
	}
	err := pgx.BeginFunc(ctx, r.s.pool, func(tx pgx.Tx) error {
		if err := lockBase(ctx, tx, workspaceID, src.KnowledgeBaseID); err != nil {
			return err
		}
		at := now()
		if _, err := tx.Exec(ctx, `INSERT INTO kb_sources (kb_id, name, documents, chunks, record, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (kb_id, name) DO UPDATE SET documents = excluded.documents, chunks = excluded.chunks,
				record = excluded.record, updated_at = excluded.updated_at`,
			src.KnowledgeBaseID, src.Name, src.Documents, src.Chunks, nullJSON(src.Record), at); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, recount, src.KnowledgeBaseID, at)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: put source %q of knowledge base %s: %w", src.Name, src.KnowledgeBaseID, mapErr(err))
	}
	return nil
}

func (r knowledgeBases) DeleteSource(ctx context.Context, workspaceID, kbID, name string) error {
	err := pgx.BeginFunc(ctx, r.s.pool, func(tx pgx.Tx) error {
		if err := lockBase(ctx, tx, workspaceID, kbID); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `DELETE FROM kb_sources WHERE kb_id = $1 AND name = $2`, kbID, name)
		if err == nil {
			err = affected(tag)
		}
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, recount, kbID, now())
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: delete source %q of knowledge base %s: %w", name, kbID, mapErr(err))
	}
	return nil
}

func (r knowledgeBases) ListSources(ctx context.Context, workspaceID, kbID string) ([]store.KnowledgeSource, error) {
	if err := kbExists(ctx, r.s.pool, workspaceID, kbID); err != nil {
		return nil, fmt.Errorf("postgres: list sources of knowledge base %s: %w", kbID, err)
	}
	out, err := queryList(ctx, r.s, scanSource,
		`SELECT `+sourceColumns+` FROM kb_sources s WHERE s.kb_id = $1 ORDER BY s.name`, kbID)
	if err != nil {
		return nil, fmt.Errorf("postgres: list sources of knowledge base %s: %w", kbID, err)
	}
	return out, nil
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
		err = kbExists(ctx, r.s.pool, workspaceID, kbID)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: list ingest jobs of knowledge base %s: %w", kbID, err)
	}
	return out, nil
}

// kbExists returns ErrNotFound unless the workspace holds the knowledge base.
func kbExists(ctx context.Context, q interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}, workspaceID, id string) error {
	var one int
	err := q.QueryRow(ctx, `SELECT 1 FROM knowledge_bases WHERE workspace_id = $1 AND id = $2`, workspaceID, id).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%w: knowledge base %s does not exist in the workspace", store.ErrNotFound, id)
	}
	return err
}
