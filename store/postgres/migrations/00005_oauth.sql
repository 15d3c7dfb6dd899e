-- OAuth clients of AgentCraft's own authorization server (POST /oauth/token,
-- client-credentials grant), which machine clients use to call /mcp. Same
-- conventions as 00001: unqualified tables, timestamptz.

-- +goose Up
CREATE TABLE oauth_clients (
    id           text        PRIMARY KEY, -- the OAuth client_id
    workspace_id text        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name         text        NOT NULL,
    -- SHA-256 of the client secret; the secret is shown once and never kept.
    secret_hash  bytea       NOT NULL UNIQUE,
    scopes       text[]      NOT NULL,
    created_at   timestamptz NOT NULL,
    revoked_at   timestamptz
);
CREATE INDEX oauth_clients_workspace ON oauth_clients (workspace_id, created_at);

-- +goose Down
DROP TABLE oauth_clients;
