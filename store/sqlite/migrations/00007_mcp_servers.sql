-- MCP servers added to a workspace through the API (POST /api/mcp/servers):
-- streamable HTTP only, credentials sealed by package secret. Same
-- conventions as 00001: INTEGER microseconds, STRICT tables.

-- +goose Up
CREATE TABLE mcp_servers (
    id           TEXT    PRIMARY KEY,
    workspace_id TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name         TEXT    NOT NULL,
    url          TEXT    NOT NULL,
    ciphertext   BLOB,             -- sealed JSON credentials; NULL for none
    key_id       TEXT    NOT NULL, -- '' without ciphertext
    created_at   INTEGER NOT NULL,
    UNIQUE (workspace_id, name)
) STRICT;

-- +goose Down
DROP TABLE mcp_servers;
