package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/store"
)

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

// KnowledgeBaseInsert returns the row, which hands back the settings as
// jsonb formats them: what a later read returns.
func (d driver) KnowledgeBaseInsert(ctx context.Context, p *store.KnowledgeBaseInsertParams) (store.KnowledgeBase, error) {
	kb := p.Base
	got, err := scanKnowledgeBase(d.s.pool.QueryRow(ctx,
		`INSERT INTO knowledge_bases (`+kbColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
		RETURNING `+kbColumns,
		kb.ID, kb.WorkspaceID, kb.Name, kb.Description, kb.IndexName, nullJSON(kb.Settings),
		kb.Documents, kb.Chunks, nullTime(kb.ExpiresAt), kb.CreatedAt, kb.UpdatedAt))
	return got, mapErr(err)
}

func (d driver) KnowledgeBaseGet(ctx context.Context, workspaceID, id string) (store.KnowledgeBase, error) {
	kb, err := scanKnowledgeBase(d.s.pool.QueryRow(ctx,
		`SELECT `+kbColumns+` FROM knowledge_bases WHERE workspace_id = $1 AND id = $2`, workspaceID, id))
	return kb, mapErr(err)
}

func (d driver) KnowledgeBaseGetByName(ctx context.Context, workspaceID, name string) (store.KnowledgeBase, error) {
	// The WHERE clause repeats the knowledge_bases_name index's.
	kb, err := scanKnowledgeBase(d.s.pool.QueryRow(ctx,
		`SELECT `+kbColumns+` FROM knowledge_bases
		WHERE workspace_id = $1 AND name = $2 AND expires_at IS NULL`, workspaceID, name))
	return kb, mapErr(err)
}

func (d driver) KnowledgeBaseList(ctx context.Context, workspaceID string) ([]store.KnowledgeBase, error) {
	// COLLATE "C" sorts by bytes, as SQLite does.
	return queryList(ctx, d.s, scanKnowledgeBase,
		`SELECT `+kbColumns+` FROM knowledge_bases
		WHERE workspace_id = $1 AND expires_at IS NULL ORDER BY name COLLATE "C"`, workspaceID)
}

func (d driver) KnowledgeBaseUpdate(ctx context.Context, p *store.KnowledgeBaseUpdateParams) (store.KnowledgeBase, error) {
	got, err := scanKnowledgeBase(d.s.pool.QueryRow(ctx,
		`UPDATE knowledge_bases SET name = $1, description = $2, updated_at = $3
		WHERE workspace_id = $4 AND id = $5 RETURNING `+kbColumns,
		p.Name, p.Description, p.Now, p.WorkspaceID, p.ID))
	return got, mapErr(err)
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

func (d driver) KnowledgeSourceGet(ctx context.Context, workspaceID, kbID, name string) (store.KnowledgeSource, error) {
	src, err := scanSource(d.s.pool.QueryRow(ctx,
		`SELECT `+sourceColumns+` FROM kb_sources s JOIN knowledge_bases kb ON kb.id = s.kb_id
		WHERE kb.workspace_id = $1 AND s.kb_id = $2 AND s.name = $3`, workspaceID, kbID, name))
	return src, mapErr(err)
}

func (d driver) KnowledgeSourcePut(ctx context.Context, p *store.KnowledgeSourcePutParams) error {
	src := p.Source
	err := pgx.BeginFunc(ctx, d.s.pool, func(tx pgx.Tx) error {
		if err := lockBase(ctx, tx, p.WorkspaceID, src.KnowledgeBaseID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO kb_sources (kb_id, name, documents, chunks, record, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (kb_id, name) DO UPDATE SET documents = excluded.documents, chunks = excluded.chunks,
				record = excluded.record, updated_at = excluded.updated_at`,
			src.KnowledgeBaseID, src.Name, src.Documents, src.Chunks, nullJSON(src.Record), p.Now); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, recount, src.KnowledgeBaseID, p.Now)
		return err
	})
	return mapErr(err)
}

func (d driver) KnowledgeSourceDelete(ctx context.Context, p *store.KnowledgeSourceDeleteParams) error {
	err := pgx.BeginFunc(ctx, d.s.pool, func(tx pgx.Tx) error {
		if err := lockBase(ctx, tx, p.WorkspaceID, p.KnowledgeBaseID); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `DELETE FROM kb_sources WHERE kb_id = $1 AND name = $2`, p.KnowledgeBaseID, p.Name)
		if err == nil {
			err = affected(tag)
		}
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, recount, p.KnowledgeBaseID, p.Now)
		return err
	})
	return mapErr(err)
}

func (d driver) KnowledgeSourceList(ctx context.Context, kbID string) ([]store.KnowledgeSource, error) {
	return queryList(ctx, d.s, scanSource,
		`SELECT `+sourceColumns+` FROM kb_sources s WHERE s.kb_id = $1 ORDER BY s.name`, kbID)
}

func (d driver) KnowledgeBaseDelete(ctx context.Context, workspaceID, id string) error {
	// The ingest jobs go with it (ON DELETE CASCADE).
	tag, err := d.s.pool.Exec(ctx, `DELETE FROM knowledge_bases WHERE workspace_id = $1 AND id = $2`, workspaceID, id)
	if err == nil {
		err = affected(tag)
	}
	return mapErr(err)
}

func (d driver) KnowledgeBaseListExpired(ctx context.Context, p *store.KnowledgeBaseListExpiredParams) ([]store.KnowledgeBase, error) {
	// The WHERE clause repeats the knowledge_bases_expiry index's.
	return queryList(ctx, d.s, scanKnowledgeBase,
		`SELECT `+kbColumns+` FROM knowledge_bases
		WHERE expires_at IS NOT NULL AND expires_at <= $1 ORDER BY expires_at, id COLLATE "C" LIMIT $2`,
		p.Now, p.Limit)
}

func (d driver) KnowledgeBaseExists(ctx context.Context, workspaceID, id string) (bool, error) {
	var exists bool
	err := d.s.pool.QueryRow(ctx,
		`SELECT EXISTS (SELECT 1 FROM knowledge_bases WHERE workspace_id = $1 AND id = $2)`, workspaceID, id).Scan(&exists)
	return exists, err
}

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
	SELECT $1::text, workspace_id, id, $2::text, $3::jsonb, $4::integer, $5::integer, $6::text, $7::timestamptz, $8::timestamptz
	FROM knowledge_bases WHERE workspace_id = $9 AND id = $10
	RETURNING ` + ingestColumns

func (d driver) IngestJobInsert(ctx context.Context, p *store.IngestJobParams) (store.IngestJob, error) {
	j := p.Job
	got, err := scanIngestJob(d.s.pool.QueryRow(ctx, insertIngestJob,
		j.ID, string(j.Status), p.Files, j.FilesDone, j.Chunks, j.Error, j.CreatedAt, j.UpdatedAt,
		j.WorkspaceID, j.KnowledgeBaseID))
	return got, mapErr(err)
}

func (d driver) IngestJobGet(ctx context.Context, workspaceID, id string) (store.IngestJob, error) {
	j, err := scanIngestJob(d.s.pool.QueryRow(ctx,
		`SELECT `+ingestColumns+` FROM ingest_jobs WHERE workspace_id = $1 AND id = $2`, workspaceID, id))
	return j, mapErr(err)
}

// IngestJobUpdate: a concurrent update waits on the row lock and re-checks
// the status against the new row.
func (d driver) IngestJobUpdate(ctx context.Context, p *store.IngestJobParams) (store.IngestJob, error) {
	j := p.Job
	got, err := scanIngestJob(d.s.pool.QueryRow(ctx,
		`UPDATE ingest_jobs SET status = $1, files = $2, files_done = $3, chunks = $4, error = $5, updated_at = $6
		WHERE workspace_id = $7 AND id = $8 AND status IN ('queued', 'running')
		RETURNING `+ingestColumns,
		string(j.Status), p.Files, j.FilesDone, j.Chunks, j.Error, j.UpdatedAt, j.WorkspaceID, j.ID))
	return got, mapErr(err)
}

func (d driver) IngestJobList(ctx context.Context, p *store.IngestJobListParams) ([]store.IngestJob, error) {
	return queryList(ctx, d.s, scanIngestJob,
		`SELECT `+ingestColumns+` FROM ingest_jobs
		WHERE workspace_id = $1 AND kb_id = $2 ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT $3`,
		p.WorkspaceID, p.KnowledgeBaseID, p.Limit)
}
