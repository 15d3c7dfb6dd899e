-- Ingest jobs record which executor works them (owner), so a restarted
-- process resumes its own interrupted jobs at once instead of waiting for
-- the queue's rescuer, and may end "partial" when some of their files
-- failed. Run checkpoints get an index for paging (store.RunPages).
-- SQLite cannot alter a CHECK constraint, so ingest_jobs is rebuilt
-- (nothing references it). Same conventions as 00001.

-- +goose Up
CREATE TABLE ingest_jobs_new (
    id           TEXT    PRIMARY KEY,
    workspace_id TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    kb_id        TEXT    NOT NULL REFERENCES knowledge_bases (id) ON DELETE CASCADE,
    status       TEXT    NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'partial', 'failed')),
    files        TEXT    NOT NULL, -- JSON array of store.IngestFile
    files_done   INTEGER NOT NULL,
    chunks       INTEGER NOT NULL,
    error        TEXT    NOT NULL,
    owner        TEXT    NOT NULL DEFAULT '', -- executor that last claimed the job
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL
) STRICT;
INSERT INTO ingest_jobs_new (id, workspace_id, kb_id, status, files, files_done, chunks, error, created_at, updated_at)
SELECT id, workspace_id, kb_id, status, files, files_done, chunks, error, created_at, updated_at FROM ingest_jobs;
DROP TABLE ingest_jobs;
ALTER TABLE ingest_jobs_new RENAME TO ingest_jobs;
CREATE INDEX ingest_jobs_kb_time ON ingest_jobs (kb_id, created_at);
-- LiveIngest scans the live jobs of every workspace at start.
CREATE INDEX ingest_jobs_live ON ingest_jobs (created_at) WHERE status IN ('queued', 'running');

-- CheckpointPage reads a run's checkpoints in id order from a cursor: without
-- this index a page of a run with 160k checkpoints sorted them all.
CREATE INDEX run_checkpoints_run ON run_checkpoints (run_id, id);

-- +goose Down
DROP INDEX run_checkpoints_run;
CREATE TABLE ingest_jobs_old (
    id           TEXT    PRIMARY KEY,
    workspace_id TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    kb_id        TEXT    NOT NULL REFERENCES knowledge_bases (id) ON DELETE CASCADE,
    status       TEXT    NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
    files        TEXT    NOT NULL,
    files_done   INTEGER NOT NULL,
    chunks       INTEGER NOT NULL,
    error        TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL
) STRICT;
INSERT INTO ingest_jobs_old (id, workspace_id, kb_id, status, files, files_done, chunks, error, created_at, updated_at)
SELECT id, workspace_id, kb_id, CASE status WHEN 'partial' THEN 'succeeded' ELSE status END,
       files, files_done, chunks, error, created_at, updated_at FROM ingest_jobs;
DROP TABLE ingest_jobs;
ALTER TABLE ingest_jobs_old RENAME TO ingest_jobs;
CREATE INDEX ingest_jobs_kb_time ON ingest_jobs (kb_id, created_at);
