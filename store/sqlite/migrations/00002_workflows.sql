-- Workflows with their versions, and workflow runs with their checkpoints
-- and events. Same conventions as 00001: INTEGER microseconds, JSON as TEXT,
-- STRICT tables.

-- +goose Up
CREATE TABLE workflows (
    id           TEXT    PRIMARY KEY,
    workspace_id TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name         TEXT    NOT NULL,
    description  TEXT    NOT NULL,
    version      INTEGER NOT NULL CHECK (version >= 1), -- newest version
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    UNIQUE (workspace_id, name)
) STRICT;

-- Rows are only ever inserted: a version is never rewritten.
CREATE TABLE workflow_versions (
    workflow_id TEXT    NOT NULL REFERENCES workflows (id) ON DELETE CASCADE,
    version     INTEGER NOT NULL CHECK (version >= 1),
    definition  TEXT    NOT NULL, -- JSON workflow.Definition
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (workflow_id, version)
) STRICT, WITHOUT ROWID;

-- workflow_id has no foreign key: a run pins its definition and outlives
-- the workflow it came from.
CREATE TABLE runs (
    id               TEXT    PRIMARY KEY,
    workspace_id     TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    workflow_id      TEXT,             -- NULL for a definition not stored as a workflow
    workflow_version INTEGER NOT NULL CHECK (workflow_version >= 0),
    definition       TEXT    NOT NULL, -- JSON
    status           TEXT    NOT NULL CHECK (status IN ('queued', 'running', 'waiting',
                         'succeeded', 'failed', 'failed_contract', 'canceled', 'blocked')),
    input            TEXT,             -- JSON, NULL when unset
    output           TEXT,             -- JSON, NULL until set
    error            TEXT    NOT NULL,
    waiting_node     TEXT    NOT NULL,
    lease_owner      TEXT    NOT NULL, -- '' when nobody holds the lease
    lease_until      INTEGER,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    finished_at      INTEGER
) STRICT;
CREATE INDEX runs_workspace_time ON runs (workspace_id, created_at);
-- Live scans the queued and running runs of every workspace.
CREATE INDEX runs_live ON runs (created_at) WHERE status IN ('queued', 'running');

-- id (the rowid) orders checkpoints by insertion; (run_id, key) is the
-- insert-once guarantee that makes a resumed run skip finished nodes.
CREATE TABLE run_checkpoints (
    id         INTEGER PRIMARY KEY,
    run_id     TEXT    NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    key        TEXT    NOT NULL,
    node_id    TEXT    NOT NULL,
    output     TEXT,             -- JSON, NULL when the node gave none
    handle     TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    UNIQUE (run_id, key)
) STRICT;

CREATE TABLE run_events (
    run_id     TEXT    NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL CHECK (seq >= 1),
    type       TEXT    NOT NULL,
    data       TEXT,             -- JSON, NULL when the event has none
    created_at INTEGER NOT NULL,
    PRIMARY KEY (run_id, seq)
) STRICT, WITHOUT ROWID;

-- +goose Down
DROP TABLE run_events;
DROP TABLE run_checkpoints;
DROP TABLE runs;
DROP TABLE workflow_versions;
DROP TABLE workflows;
