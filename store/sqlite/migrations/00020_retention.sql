-- Retention (package store/retention): per-workspace overrides of the
-- server's retention policies, the indexes the pruner scans by age, and
-- the one guarded exception to the audit log's append-only rule. Same
-- conventions as 00001: INTEGER microseconds, STRICT tables.
--
-- The audit log stays append-only: UPDATE is always refused, and so is
-- DELETE, except of rows older than a cut-off that a row of
-- audit_prune_window names, and only when that cut-off is at least a day
-- in the past. The pruner inserts that row, deletes in batches and
-- removes the row again, all in one transaction, so no other connection
-- ever sees it. Someone with a SQL shell on the file can do the same:
-- this is the deliberate, visible exception (an audit retention policy
-- set by the operator), not a way around review; DROP TRIGGER was always
-- one statement away.

-- +goose Up
CREATE TABLE retention_policies (
    workspace_id TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    kind         TEXT    NOT NULL, -- run_events, checkpoints, uploads, conversations
    age          TEXT    NOT NULL, -- "30d", "12h", or "keep"
    updated_at   INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, kind)
) STRICT, WITHOUT ROWID;

-- The pruner walks each in (time, id) order, a batch at a time.
CREATE INDEX runs_finished ON runs (finished_at, id) WHERE finished_at IS NOT NULL;
CREATE INDEX conversations_activity ON conversations (updated_at, id);
CREATE INDEX uploads_created ON uploads (created_at, id);

CREATE TABLE audit_prune_window (
    before INTEGER NOT NULL -- microseconds: rows created before it may go
) STRICT;

DROP TRIGGER audit_log_no_delete;
-- +goose StatementBegin
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
WHEN NOT EXISTS (
    SELECT 1 FROM audit_prune_window w
    WHERE OLD.created_at < w.before
      AND w.before <= (unixepoch('now') - 86400) * 1000000
)
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER audit_log_no_delete;
-- +goose StatementBegin
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;
-- +goose StatementEnd
DROP TABLE audit_prune_window;
DROP INDEX uploads_created;
DROP INDEX conversations_activity;
DROP INDEX runs_finished;
DROP TABLE retention_policies;
