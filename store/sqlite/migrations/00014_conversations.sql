-- Conversations with their messages, and memory items (package memory).
-- Same conventions as 00001: INTEGER microseconds, JSON as TEXT, STRICT
-- tables.

-- +goose Up
-- last_seq is the seq of the newest message: an append moves it in the
-- statement that also checks the workspace, so concurrent appends take
-- consecutive ranges and never share a seq.
CREATE TABLE conversations (
    id                 TEXT    PRIMARY KEY,
    workspace_id       TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    title              TEXT    NOT NULL,
    owner              TEXT    NOT NULL,
    agent              TEXT    NOT NULL,
    external_ref       TEXT,            -- NULL when the client keeps no id of its own
    summary            TEXT    NOT NULL,
    summarized_through INTEGER NOT NULL CHECK (summarized_through >= 0),
    last_seq           INTEGER NOT NULL CHECK (last_seq >= 0),
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL,
    CHECK (summarized_through <= last_seq)
) STRICT;
CREATE UNIQUE INDEX conversations_ref ON conversations (workspace_id, external_ref) WHERE external_ref IS NOT NULL;
-- List pages one owner's conversations, newest first.
CREATE INDEX conversations_owner ON conversations (workspace_id, owner, created_at, id);

CREATE TABLE messages (
    conversation_id TEXT    NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    seq             INTEGER NOT NULL CHECK (seq > 0),
    role            TEXT    NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
    content         TEXT    NOT NULL,
    tool_calls      TEXT,            -- JSON array of llm.ToolCall, NULL for none
    tool_call_id    TEXT    NOT NULL,
    created_at      INTEGER NOT NULL,
    PRIMARY KEY (conversation_id, seq)
) STRICT;

CREATE TABLE memories (
    id              TEXT    PRIMARY KEY,
    workspace_id    TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    scope           TEXT    NOT NULL CHECK (scope IN ('user', 'workspace', 'conversation')),
    visibility      TEXT    NOT NULL CHECK (visibility IN ('group', 'personal')),
    owner           TEXT    NOT NULL,
    conversation_id TEXT    REFERENCES conversations (id) ON DELETE CASCADE,
    text            TEXT    NOT NULL,
    source          TEXT    NOT NULL,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    CHECK ((scope = 'conversation') = (conversation_id IS NOT NULL))
) STRICT;
CREATE INDEX memories_time ON memories (workspace_id, created_at, id);
CREATE INDEX memories_owner ON memories (workspace_id, owner, created_at);
CREATE INDEX memories_conversation ON memories (conversation_id) WHERE conversation_id IS NOT NULL;

-- +goose Down
DROP TABLE memories;
DROP TABLE messages;
DROP TABLE conversations;
