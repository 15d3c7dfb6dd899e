-- Workflows with their versions, and workflow runs with their checkpoints
-- and events. Same conventions as 00001: unqualified tables, timestamptz,
-- jsonb.

-- +goose Up
CREATE TABLE workflows (
    id           text        PRIMARY KEY,
    workspace_id text        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name         text        NOT NULL,
    description  text        NOT NULL,
    version      integer     NOT NULL CHECK (version >= 1), -- newest version
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    UNIQUE (workspace_id, name)
);

-- Rows are only ever inserted: a version is never rewritten.
CREATE TABLE workflow_versions (
    workflow_id text        NOT NULL REFERENCES workflows (id) ON DELETE CASCADE,
    version     integer     NOT NULL CHECK (version >= 1),
    definition  jsonb       NOT NULL,
    created_at  timestamptz NOT NULL,
    PRIMARY KEY (workflow_id, version)
);

-- workflow_id has no foreign key: a run pins its definition and outlives
-- the workflow it came from.
CREATE TABLE runs (
    id               text        PRIMARY KEY,
    workspace_id     text        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    workflow_id      text,       -- NULL for a definition not stored as a workflow
    workflow_version integer     NOT NULL CHECK (workflow_version >= 0),
    definition       jsonb       NOT NULL,
    status           text        NOT NULL CHECK (status IN ('queued', 'running', 'waiting',
                         'succeeded', 'failed', 'failed_contract', 'canceled', 'blocked')),
    input            jsonb,
    output           jsonb,
    error            text        NOT NULL,
    waiting_node     text        NOT NULL,
    lease_owner      text        NOT NULL, -- '' when nobody holds the lease
    lease_until      timestamptz,
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL,
    finished_at      timestamptz
);
CREATE INDEX runs_workspace_time ON runs (workspace_id, created_at);
-- Live scans the queued and running runs of every workspace.
CREATE INDEX runs_live ON runs (created_at) WHERE status IN ('queued', 'running');

-- id orders checkpoints by insertion; (run_id, key) is the insert-once
-- guarantee that makes a resumed run skip finished nodes.
CREATE TABLE run_checkpoints (
    id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id     text        NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    key        text        NOT NULL,
    node_id    text        NOT NULL,
    output     jsonb,
    handle     text        NOT NULL,
    created_at timestamptz NOT NULL,
    UNIQUE (run_id, key)
);

CREATE TABLE run_events (
    run_id     text        NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq        bigint      NOT NULL CHECK (seq >= 1),
    type       text        NOT NULL,
    data       jsonb,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (run_id, seq)
);

-- +goose Down
DROP TABLE run_events;
DROP TABLE run_checkpoints;
DROP TABLE runs;
DROP TABLE workflow_versions;
DROP TABLE workflows;
