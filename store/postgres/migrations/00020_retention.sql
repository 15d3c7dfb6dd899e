-- Retention (package store/retention): per-workspace overrides of the
-- server's retention policies, the indexes the pruner scans by age, and
-- the one guarded exception to the audit log's append-only rule. Same
-- conventions as 00001: unqualified tables, timestamptz.
--
-- The audit log stays append-only: UPDATE and TRUNCATE are always
-- refused, and so is DELETE, except of rows older than a cut-off that a
-- row of audit_prune_window names, and only when that cut-off is at least
-- a day in the past. The pruner inserts that row, deletes in batches and
-- removes the row again, all in one transaction, so no other session ever
-- sees it. Someone with psql can do the same: this is the deliberate,
-- visible exception (an audit retention policy set by the operator), not
-- a way around review; DROP TRIGGER was always one statement away.

-- +goose Up
CREATE TABLE retention_policies (
    workspace_id text        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    kind         text        NOT NULL, -- run_events, checkpoints, uploads, conversations
    age          text        NOT NULL, -- "30d", "12h", or "keep"
    updated_at   timestamptz NOT NULL,
    PRIMARY KEY (workspace_id, kind)
);

-- The pruner walks each in (time, id) order, a batch at a time.
CREATE INDEX runs_finished ON runs (finished_at, id) WHERE finished_at IS NOT NULL;
CREATE INDEX conversations_activity ON conversations (updated_at, id);
CREATE INDEX uploads_created ON uploads (created_at, id);

CREATE TABLE audit_prune_window (
    before timestamptz NOT NULL -- rows created before it may go
);

-- +goose StatementBegin
CREATE FUNCTION audit_log_guarded_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM audit_prune_window w
               WHERE OLD.created_at < w.before AND w.before <= now() - interval '1 day') THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'audit_log is append-only: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$;
-- +goose StatementEnd

DROP TRIGGER audit_log_no_update_delete ON audit_log;
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_guarded_delete();

-- +goose Down
DROP TRIGGER audit_log_no_delete ON audit_log;
DROP TRIGGER audit_log_no_update ON audit_log;
CREATE TRIGGER audit_log_no_update_delete BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
DROP FUNCTION audit_log_guarded_delete();
DROP TABLE audit_prune_window;
DROP INDEX uploads_created;
DROP INDEX conversations_activity;
DROP INDEX runs_finished;
DROP TABLE retention_policies;
