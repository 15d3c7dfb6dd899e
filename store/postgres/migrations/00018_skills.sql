-- Skills (package skill): a workspace's instruction packages in the Agent
-- Skills format, the front matter of their SKILL.md as columns, the
-- Markdown below it as instructions, and their resource files in a child
-- table so that reading a skill does not read its files. Same conventions
-- as 00001: unqualified tables, timestamptz, jsonb.

-- +goose Up
CREATE TABLE skills (
    workspace_id  text        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name          text        NOT NULL,
    description   text        NOT NULL,
    instructions  text        NOT NULL,
    license       text        NOT NULL, -- '' when absent
    compatibility text        NOT NULL, -- '' when absent
    allowed_tools text        NOT NULL, -- '' when absent
    metadata      jsonb,                -- object of strings; NULL when absent
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL,
    PRIMARY KEY (workspace_id, name)
);

-- size is kept so that listing a skill's files reads no file.
CREATE TABLE skill_files (
    workspace_id text   NOT NULL,
    skill        text   NOT NULL,
    path         text   NOT NULL,
    size         bigint NOT NULL CHECK (size >= 0),
    data         bytea  NOT NULL,
    PRIMARY KEY (workspace_id, skill, path),
    FOREIGN KEY (workspace_id, skill) REFERENCES skills (workspace_id, name) ON DELETE CASCADE
);

-- +goose Down
DROP TABLE skill_files;
DROP TABLE skills;
