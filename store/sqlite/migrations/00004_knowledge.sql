-- Knowledge bases with their ingest jobs, and uploaded files. Same
-- conventions as 00001: INTEGER microseconds, JSON as TEXT, STRICT tables.

-- +goose Up
-- expires_at is NULL for a persistent base and set for a temporary one
-- (files uploaded in a chat); only persistent names are unique, since
-- temporary bases have generated names and come and go.
CREATE TABLE knowledge_bases (
    id           TEXT    PRIMARY KEY,
    workspace_id TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name         TEXT    NOT NULL,
    description  TEXT    NOT NULL,
    index_name   TEXT    NOT NULL,
    settings     TEXT,             -- JSON object, NULL for the defaults
    documents    INTEGER NOT NULL CHECK (documents >= 0),
    chunks       INTEGER NOT NULL CHECK (chunks >= 0),
    expires_at   INTEGER,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL
) STRICT;
CREATE UNIQUE INDEX knowledge_bases_name ON knowledge_bases (workspace_id, name) WHERE expires_at IS NULL;
-- Expired scans the temporary bases of every workspace.
CREATE INDEX knowledge_bases_expiry ON knowledge_bases (expires_at) WHERE expires_at IS NOT NULL;

CREATE TABLE ingest_jobs (
    id           TEXT    PRIMARY KEY,
    workspace_id TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    kb_id        TEXT    NOT NULL REFERENCES knowledge_bases (id) ON DELETE CASCADE,
    status       TEXT    NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
    files        TEXT    NOT NULL, -- JSON array of store.IngestFile
    files_done   INTEGER NOT NULL,
    chunks       INTEGER NOT NULL,
    error        TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL
) STRICT;
CREATE INDEX ingest_jobs_kb_time ON ingest_jobs (kb_id, created_at);

CREATE TABLE uploads (
    id           TEXT    PRIMARY KEY,
    workspace_id TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name         TEXT    NOT NULL,
    content_type TEXT    NOT NULL,
    size         INTEGER NOT NULL CHECK (size >= 0),
    data         BLOB    NOT NULL,
    expires_at   INTEGER NOT NULL,
    created_at   INTEGER NOT NULL
) STRICT;
-- DeleteExpired scans by expiry across workspaces.
CREATE INDEX uploads_expiry ON uploads (expires_at);

-- +goose Down
DROP TABLE uploads;
DROP TABLE ingest_jobs;
DROP TABLE knowledge_bases;
