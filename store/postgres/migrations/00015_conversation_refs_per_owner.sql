-- A client's own id of a thread (Open WebUI's chat id, AG-UI's threadId)
-- is unique per owner, not per workspace: two people whose clients pick
-- the same id ("thread-1") each get their own conversation instead of the
-- second being refused. Every existing row satisfies the narrower index.

-- +goose Up
DROP INDEX conversations_ref;
CREATE UNIQUE INDEX conversations_ref ON conversations (workspace_id, owner, external_ref) WHERE external_ref IS NOT NULL;

-- +goose Down
DROP INDEX conversations_ref;
CREATE UNIQUE INDEX conversations_ref ON conversations (workspace_id, external_ref) WHERE external_ref IS NOT NULL;
