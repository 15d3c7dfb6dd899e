-- OAuth clients of AgentCraft's own authorization server (POST /oauth/token,
-- client-credentials grant), which machine clients use to call /mcp. Same
-- conventions as 00001: INTEGER microseconds, JSON as TEXT, STRICT tables.

-- +goose Up
CREATE TABLE oauth_clients (
    id           TEXT    PRIMARY KEY, -- the OAuth client_id
    workspace_id TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name         TEXT    NOT NULL,
    -- SHA-256 of the client secret; the secret is shown once and never kept.
    secret_hash  BLOB    NOT NULL UNIQUE,
    scopes       TEXT    NOT NULL, -- JSON array of scope strings
    created_at   INTEGER NOT NULL,
    revoked_at   INTEGER
) STRICT;
CREATE INDEX oauth_clients_workspace ON oauth_clients (workspace_id, created_at);

-- +goose Down
DROP TABLE oauth_clients;
