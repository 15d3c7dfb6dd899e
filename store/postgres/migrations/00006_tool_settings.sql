-- Per-workspace tool switches (POST /api/tools/settings). A tool with no row
-- is enabled. Same conventions as 00001: unqualified tables, timestamptz.

-- +goose Up
CREATE TABLE tool_settings (
    workspace_id text        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    tool         text        NOT NULL, -- name as GET /api/tools lists it
    enabled      boolean     NOT NULL,
    updated_at   timestamptz NOT NULL,
    PRIMARY KEY (workspace_id, tool)
);

-- +goose Down
DROP TABLE tool_settings;
