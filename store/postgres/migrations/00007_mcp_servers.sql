-- MCP servers added to a workspace through the API (POST /api/mcp/servers):
-- streamable HTTP only, credentials sealed by package secret. Same
-- conventions as 00001: unqualified tables, timestamptz.

-- +goose Up
CREATE TABLE mcp_servers (
    id           text        PRIMARY KEY,
    workspace_id text        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name         text        NOT NULL,
    url          text        NOT NULL,
    ciphertext   bytea,                -- sealed JSON credentials; NULL for none
    key_id       text        NOT NULL, -- '' without ciphertext
    created_at   timestamptz NOT NULL,
    UNIQUE (workspace_id, name)
);

-- +goose Down
DROP TABLE mcp_servers;
