-- Conversations with their messages, and memory items (package memory).
-- Same conventions as 00001: unqualified tables, timestamptz, jsonb.

-- +goose Up
-- last_seq is the seq of the newest message: an append moves it in the
-- statement that also checks the workspace (and locks the row), so
-- concurrent appends take consecutive ranges and never share a seq.
CREATE TABLE conversations (
    id                 text        PRIMARY KEY,
    workspace_id       text        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    title              text        NOT NULL,
    owner              text        NOT NULL,
    agent              text        NOT NULL,
    external_ref       text,                  -- NULL when the client keeps no id of its own
    summary            text        NOT NULL,
    summarized_through bigint      NOT NULL CHECK (summarized_through >= 0),
    last_seq           bigint      NOT NULL CHECK (last_seq >= 0),
    created_at         timestamptz NOT NULL,
    updated_at         timestamptz NOT NULL,
    CHECK (summarized_through <= last_seq)
);
CREATE UNIQUE INDEX conversations_ref ON conversations (workspace_id, external_ref) WHERE external_ref IS NOT NULL;
-- List pages one owner's conversations, newest first.
CREATE INDEX conversations_owner ON conversations (workspace_id, owner, created_at, id);

CREATE TABLE messages (
    conversation_id text        NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    seq             bigint      NOT NULL CHECK (seq > 0),
    role            text        NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
    content         text        NOT NULL,
    tool_calls      jsonb,                 -- array of llm.ToolCall, NULL for none
    tool_call_id    text        NOT NULL,
    created_at      timestamptz NOT NULL,
    PRIMARY KEY (conversation_id, seq)
);

CREATE TABLE memories (
    id              text        PRIMARY KEY,
    workspace_id    text        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    scope           text        NOT NULL CHECK (scope IN ('user', 'workspace', 'conversation')),
    visibility      text        NOT NULL CHECK (visibility IN ('group', 'personal')),
    owner           text        NOT NULL,
    conversation_id text        REFERENCES conversations (id) ON DELETE CASCADE,
    text            text        NOT NULL,
    source          text        NOT NULL,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    CHECK ((scope = 'conversation') = (conversation_id IS NOT NULL))
);
CREATE INDEX memories_time ON memories (workspace_id, created_at, id);
CREATE INDEX memories_owner ON memories (workspace_id, owner, created_at);
CREATE INDEX memories_conversation ON memories (conversation_id) WHERE conversation_id IS NOT NULL;

-- +goose Down
DROP TABLE memories;
DROP TABLE messages;
DROP TABLE conversations;
