-- Skills (package skill): a workspace's instruction packages in the Agent
-- Skills format, the front matter of their SKILL.md as columns, the
-- Markdown below it as instructions, and their resource files in a child
-- table so that reading a skill does not read its files. Same conventions
-- as 00001: INTEGER microseconds, JSON as TEXT, STRICT tables.

-- +goose Up
CREATE TABLE skills (
    workspace_id  TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name          TEXT    NOT NULL,
    description   TEXT    NOT NULL,
    instructions  TEXT    NOT NULL,
    license       TEXT    NOT NULL, -- '' when absent
    compatibility TEXT    NOT NULL, -- '' when absent
    allowed_tools TEXT    NOT NULL, -- '' when absent
    metadata      TEXT,             -- JSON object of strings; NULL when absent
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, name)
) STRICT;

-- size is kept so that listing a skill's files reads no file.
CREATE TABLE skill_files (
    workspace_id TEXT    NOT NULL,
    skill        TEXT    NOT NULL,
    path         TEXT    NOT NULL,
    size         INTEGER NOT NULL CHECK (size >= 0),
    data         BLOB    NOT NULL,
    PRIMARY KEY (workspace_id, skill, path),
    FOREIGN KEY (workspace_id, skill) REFERENCES skills (workspace_id, name) ON DELETE CASCADE
) STRICT;

-- +goose Down
DROP TABLE skill_files;
DROP TABLE skills;
