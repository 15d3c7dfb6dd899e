-- Initial schema. Times are INTEGER microseconds since the Unix epoch (UTC),
-- which sort and compare as numbers; JSON is TEXT. STRICT tables reject values
-- of the wrong type instead of silently storing them.

-- +goose Up
CREATE TABLE workspaces (
    id         TEXT    PRIMARY KEY,
    name       TEXT    NOT NULL UNIQUE,
    created_at INTEGER NOT NULL
) STRICT;

CREATE TABLE api_keys (
    id           TEXT    PRIMARY KEY,
    workspace_id TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name         TEXT    NOT NULL,
    prefix       TEXT    NOT NULL,
    -- The unique index on hash answers GetByHash on every request.
    hash         BLOB    NOT NULL UNIQUE,
    created_at   INTEGER NOT NULL,
    last_used_at INTEGER,
    revoked_at   INTEGER
) STRICT;
CREATE INDEX api_keys_workspace ON api_keys (workspace_id, created_at);

CREATE TABLE agents (
    id           TEXT    PRIMARY KEY,
    workspace_id TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name         TEXT    NOT NULL,
    model        TEXT    NOT NULL,
    instructions TEXT    NOT NULL,
    tools        TEXT    NOT NULL, -- JSON array of tool names
    params       TEXT    NOT NULL, -- JSON object (store.AgentParams)
    source       TEXT    NOT NULL CHECK (source IN ('config', 'api')),
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    UNIQUE (workspace_id, name)
) STRICT;

CREATE TABLE providers (
    id           TEXT    PRIMARY KEY,
    workspace_id TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name         TEXT    NOT NULL,
    type         TEXT    NOT NULL,
    base_url     TEXT    NOT NULL,
    settings     TEXT,             -- JSON, NULL when unset
    source       TEXT    NOT NULL CHECK (source IN ('config', 'api')),
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    UNIQUE (workspace_id, name)
) STRICT;

CREATE TABLE credentials (
    id           TEXT    PRIMARY KEY,
    workspace_id TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    provider     TEXT    NOT NULL,
    ciphertext   BLOB    NOT NULL,
    key_id       TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    UNIQUE (workspace_id, provider)
) STRICT;

CREATE TABLE usage_records (
    id            TEXT    PRIMARY KEY,
    workspace_id  TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    api_key_id    TEXT    NOT NULL,
    agent         TEXT    NOT NULL,
    model         TEXT    NOT NULL,
    provider      TEXT    NOT NULL,
    end_user      TEXT    NOT NULL,
    input_tokens  INTEGER NOT NULL CHECK (input_tokens >= 0),
    output_tokens INTEGER NOT NULL CHECK (output_tokens >= 0),
    cached_tokens INTEGER NOT NULL CHECK (cached_tokens >= 0),
    latency_ms    INTEGER NOT NULL CHECK (latency_ms >= 0),
    upstream_ms   INTEGER NOT NULL CHECK (upstream_ms >= 0),
    status        TEXT    NOT NULL CHECK (status IN ('ok', 'error')),
    error_kind    TEXT    NOT NULL,
    created_at    INTEGER NOT NULL
) STRICT;
CREATE INDEX usage_records_workspace_time ON usage_records (workspace_id, created_at);

-- +goose Down
DROP TABLE usage_records;
DROP TABLE credentials;
DROP TABLE providers;
DROP TABLE agents;
DROP TABLE api_keys;
DROP TABLE workspaces;
