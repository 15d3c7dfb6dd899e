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

// KnowledgeBaseInsert returns the row it was given: SQLite stores what it
// is given.
func (d driver) KnowledgeBaseInsert(ctx context.Context, p *store.KnowledgeBaseInsertParams) (store.KnowledgeBase, error) {
	kb := p.Base
	_, err := d.s.writer.ExecContext(ctx,
		`INSERT INTO knowledge_bases (`+kbColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		kb.ID, kb.WorkspaceID, kb.Name, kb.Description, kb.IndexName, nullJSON(kb.Settings),
		kb.Documents, kb.Chunks, nullTime(kb.ExpiresAt), micros(kb.CreatedAt), micros(kb.UpdatedAt))
	if err != nil {
		return store.KnowledgeBase{}, mapErr(err)
	}
	return kb, nil
}

func (d driver) KnowledgeBaseGet(ctx context.Context, workspaceID, id string) (store.KnowledgeBase, error) {
	kb, err := scanKnowledgeBase(d.s.reader.QueryRowContext(ctx,
		`SELECT `+kbColumns+` FROM knowledge_bases WHERE workspace_id = ? AND id = ?`, workspaceID, id))
	return kb, mapErr(err)
}

func (d driver) KnowledgeBaseGetByName(ctx context.Context, workspaceID, name string) (store.KnowledgeBase, error) {
	// The WHERE clause repeats the knowledge_bases_name index's.
	kb, err := scanKnowledgeBase(d.s.reader.QueryRowContext(ctx,
		`SELECT `+kbColumns+` FROM knowledge_bases
		WHERE workspace_id = ? AND name = ? AND expires_at IS NULL`, workspaceID, name))
	return kb, mapErr(err)
}

func (d driver) KnowledgeBaseList(ctx context.Context, workspaceID string) ([]store.KnowledgeBase, error) {
	return queryList(ctx, d.s.reader, scanKnowledgeBase,
		`SELECT `+kbColumns+` FROM knowledge_bases
		WHERE workspace_id = ? AND expires_at IS NULL ORDER BY name`, workspaceID)
}

func (d driver) KnowledgeBaseUpdate(ctx context.Context, p *store.KnowledgeBaseUpdateParams) (store.KnowledgeBase, error) {
	got, err := scanKnowledgeBase(d.s.writer.QueryRowContext(ctx,
		`UPDATE knowledge_bases SET name = ?, description = ?, updated_at = ?
		WHERE workspace_id = ? AND id = ? RETURNING `+kbColumns,
		p.Name, p.Description, micros(p.Now), p.WorkspaceID, p.ID))
	return got, mapErr(err)
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

func (d driver) KnowledgeSourceGet(ctx context.Context, workspaceID, kbID, name string) (store.KnowledgeSource, error) {
	src, err := scanSource(d.s.reader.QueryRowContext(ctx,
		`SELECT `+sourceColumns+` FROM kb_sources s JOIN knowledge_bases kb ON kb.id = s.kb_id
		WHERE kb.workspace_id = ? AND s.kb_id = ? AND s.name = ?`, workspaceID, kbID, name))
	return src, mapErr(err)
}

// KnowledgeSourcePut is one transaction on the one writer connection, so
// the recount sees every committed source.
func (d driver) KnowledgeSourcePut(ctx context.Context, p *store.KnowledgeSourcePutParams) error {
	src := p.Source
	err := d.s.writeTx(ctx, func(tx *sql.Tx) error {
		if err := kbExists(ctx, tx, p.WorkspaceID, src.KnowledgeBaseID); err != nil {
			return err
		}
		at := micros(p.Now)
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
	return mapErr(err)
}

func (d driver) KnowledgeSourceDelete(ctx context.Context, p *store.KnowledgeSourceDeleteParams) error {
	err := d.s.writeTx(ctx, func(tx *sql.Tx) error {
		if err := kbExists(ctx, tx, p.WorkspaceID, p.KnowledgeBaseID); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM kb_sources WHERE kb_id = ? AND name = ?`, p.KnowledgeBaseID, p.Name)
		if err == nil {
			err = rowsAffected(res)
		}
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, recount, p.KnowledgeBaseID, micros(p.Now))
		return err
	})
	return mapErr(err)
}

func (d driver) KnowledgeSourceList(ctx context.Context, kbID string) ([]store.KnowledgeSource, error) {
	return queryList(ctx, d.s.reader, scanSource,
		`SELECT `+sourceColumns+` FROM kb_sources s WHERE s.kb_id = ? ORDER BY s.name`, kbID)
}

func (d driver) KnowledgeBaseDelete(ctx context.Context, workspaceID, id string) error {
	// The ingest jobs go with it (ON DELETE CASCADE).
	res, err := d.s.writer.ExecContext(ctx, `DELETE FROM knowledge_bases WHERE workspace_id = ? AND id = ?`, workspaceID, id)
	if err == nil {
		err = rowsAffected(res)
	}
	return mapErr(err)
}

func (d driver) KnowledgeBaseListExpired(ctx context.Context, p *store.KnowledgeBaseListExpiredParams) ([]store.KnowledgeBase, error) {
	// The WHERE clause repeats the knowledge_bases_expiry index's.
	return queryList(ctx, d.s.reader, scanKnowledgeBase,
		`SELECT `+kbColumns+` FROM knowledge_bases
		WHERE expires_at IS NOT NULL AND expires_at <= ? ORDER BY expires_at, id LIMIT ?`,
		micros(p.Now), p.Limit)
}

func (d driver) KnowledgeBaseExists(ctx context.Context, workspaceID, id string) (bool, error) {
	err := kbExists(ctx, d.s.reader, workspaceID, id)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

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

// IngestJobInsert returns the row it was given: SQLite stores what it is
// given.
func (d driver) IngestJobInsert(ctx context.Context, p *store.IngestJobParams) (store.IngestJob, error) {
	j := p.Job
	res, err := d.s.writer.ExecContext(ctx, insertIngestJob,
		j.ID, j.Status, string(p.Files), j.FilesDone, j.Chunks, j.Error, micros(j.CreatedAt), micros(j.UpdatedAt),
		j.WorkspaceID, j.KnowledgeBaseID)
	if err == nil {
		err = rowsAffected(res)
	}
	if err != nil {
		return store.IngestJob{}, mapErr(err)
	}
	return j, nil
}

func (d driver) IngestJobGet(ctx context.Context, workspaceID, id string) (store.IngestJob, error) {
	j, err := scanIngestJob(d.s.reader.QueryRowContext(ctx,
		`SELECT `+ingestColumns+` FROM ingest_jobs WHERE workspace_id = ? AND id = ?`, workspaceID, id))
	return j, mapErr(err)
}

const updateIngestJob = `UPDATE ingest_jobs
	SET status = ?, files = ?, files_done = ?, chunks = ?, error = ?, updated_at = ?
	WHERE workspace_id = ? AND id = ? AND status IN ('queued', 'running')
	RETURNING ` + ingestColumns

// IngestJobUpdate reports progress after every file, so its statement is
// prepared once on the writer (BenchmarkIngestProgress).
func (d driver) IngestJobUpdate(ctx context.Context, p *store.IngestJobParams) (store.IngestJob, error) {
	j := p.Job
	stmt, err := d.s.writeStmt(ctx, updateIngestJob)
	if err != nil {
		return store.IngestJob{}, fmt.Errorf("prepare: %w", err)
	}
	got, err := scanIngestJob(stmt.QueryRowContext(ctx,
		j.Status, string(p.Files), j.FilesDone, j.Chunks, j.Error, micros(j.UpdatedAt), j.WorkspaceID, j.ID))
	return got, mapErr(err)
}

func (d driver) IngestJobList(ctx context.Context, p *store.IngestJobListParams) ([]store.IngestJob, error) {
	return queryList(ctx, d.s.reader, scanIngestJob,
		`SELECT `+ingestColumns+` FROM ingest_jobs
		WHERE workspace_id = ? AND kb_id = ? ORDER BY created_at DESC, id DESC LIMIT ?`,
		p.WorkspaceID, p.KnowledgeBaseID, p.Limit)
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
