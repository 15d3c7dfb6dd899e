-- Per-workspace tool switches (POST /api/tools/settings). A tool with no row
-- is enabled. Same conventions as 00001: INTEGER microseconds, STRICT tables.

-- +goose Up
CREATE TABLE tool_settings (
    workspace_id TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    tool         TEXT    NOT NULL, -- name as GET /api/tools lists it
    enabled      INTEGER NOT NULL CHECK (enabled IN (0, 1)),
    updated_at   INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, tool)
) STRICT;

-- +goose Down
DROP TABLE tool_settings;
