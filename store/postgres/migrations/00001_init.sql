-- Initial schema. Tables are created unqualified, in the first schema of the
-- connection's search_path, so one database can hold several installations
-- (and tests can isolate themselves) by schema.

-- +goose Up
CREATE TABLE workspaces (
    id         text        PRIMARY KEY,
    name       text        NOT NULL UNIQUE,
    created_at timestamptz NOT NULL
);

CREATE TABLE api_keys (
    id           text        PRIMARY KEY,
    workspace_id text        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name         text        NOT NULL,
    prefix       text        NOT NULL,
    -- The unique index on hash answers GetByHash on every request.
    hash         bytea       NOT NULL UNIQUE,
    created_at   timestamptz NOT NULL,
    last_used_at timestamptz,
    revoked_at   timestamptz
);
CREATE INDEX api_keys_workspace ON api_keys (workspace_id, created_at);

CREATE TABLE agents (
    id           text        PRIMARY KEY,
    workspace_id text        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name         text        NOT NULL,
    model        text        NOT NULL,
    instructions text        NOT NULL,
    tools        text[]      NOT NULL,
    params       jsonb       NOT NULL,
    source       text        NOT NULL CHECK (source IN ('config', 'api')),
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    UNIQUE (workspace_id, name)
);

CREATE TABLE providers (
    id           text        PRIMARY KEY,
    workspace_id text        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name         text        NOT NULL,
    type         text        NOT NULL,
    base_url     text        NOT NULL,
    settings     jsonb,
    source       text        NOT NULL CHECK (source IN ('config', 'api')),
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    UNIQUE (workspace_id, name)
);

CREATE TABLE credentials (
    id           text        PRIMARY KEY,
    workspace_id text        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    provider     text        NOT NULL,
    ciphertext   bytea       NOT NULL,
    key_id       text        NOT NULL,
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    UNIQUE (workspace_id, provider)
);

CREATE TABLE usage_records (
    id            text        PRIMARY KEY,
    workspace_id  text        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    api_key_id    text        NOT NULL,
    agent         text        NOT NULL,
    model         text        NOT NULL,
    provider      text        NOT NULL,
    end_user      text        NOT NULL,
    -- integer, not bigint, so that SUM() is bigint rather than numeric.
    input_tokens  integer     NOT NULL CHECK (input_tokens >= 0),
    output_tokens integer     NOT NULL CHECK (output_tokens >= 0),
    cached_tokens integer     NOT NULL CHECK (cached_tokens >= 0),
    latency_ms    integer     NOT NULL CHECK (latency_ms >= 0),
    upstream_ms   integer     NOT NULL CHECK (upstream_ms >= 0),
    status        text        NOT NULL CHECK (status IN ('ok', 'error')),
    error_kind    text        NOT NULL,
    created_at    timestamptz NOT NULL
);
CREATE INDEX usage_records_workspace_time ON usage_records (workspace_id, created_at);

-- +goose Down
DROP TABLE usage_records;
DROP TABLE credentials;
DROP TABLE providers;
DROP TABLE agents;
DROP TABLE api_keys;
DROP TABLE workspaces;
