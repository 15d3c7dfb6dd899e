-- Knowledge bases with their ingest jobs, and uploaded files. Same
-- conventions as 00001: unqualified tables, timestamptz, jsonb, bytea.

-- +goose Up
-- expires_at is NULL for a persistent base and set for a temporary one
-- (files uploaded in a chat); only persistent names are unique, since
-- temporary bases have generated names and come and go.
CREATE TABLE knowledge_bases (
    id           text        PRIMARY KEY,
    workspace_id text        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name         text        NOT NULL,
    description  text        NOT NULL,
    index_name   text        NOT NULL,
    settings     jsonb,                 -- NULL for the defaults
    documents    integer     NOT NULL CHECK (documents >= 0),
    chunks       integer     NOT NULL CHECK (chunks >= 0),
    expires_at   timestamptz,
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL
);
CREATE UNIQUE INDEX knowledge_bases_name ON knowledge_bases (workspace_id, name) WHERE expires_at IS NULL;
-- Expired scans the temporary bases of every workspace.
CREATE INDEX knowledge_bases_expiry ON knowledge_bases (expires_at) WHERE expires_at IS NOT NULL;

CREATE TABLE ingest_jobs (
    id           text        PRIMARY KEY,
    workspace_id text        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    kb_id        text        NOT NULL REFERENCES knowledge_bases (id) ON DELETE CASCADE,
    status       text        NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
    files        jsonb       NOT NULL, -- array of store.IngestFile
    files_done   integer     NOT NULL,
    chunks       integer     NOT NULL,
    error        text        NOT NULL,
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL
);
CREATE INDEX ingest_jobs_kb_time ON ingest_jobs (kb_id, created_at);

CREATE TABLE uploads (
    id           text        PRIMARY KEY,
    workspace_id text        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name         text        NOT NULL,
    content_type text        NOT NULL,
    size         bigint      NOT NULL CHECK (size >= 0),
    data         bytea       NOT NULL,
    expires_at   timestamptz NOT NULL,
    created_at   timestamptz NOT NULL
);
-- DeleteExpired scans by expiry across workspaces.
CREATE INDEX uploads_expiry ON uploads (expires_at);

-- +goose Down
DROP TABLE uploads;
DROP TABLE ingest_jobs;
DROP TABLE knowledge_bases;
