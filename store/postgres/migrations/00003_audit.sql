-- The audit log: guard, PII, credential and administrative events. Same
-- conventions as 00001: unqualified tables, timestamptz, jsonb.
--
-- The table is append-only in the database itself, not only in the Go API:
-- triggers raise an exception on every UPDATE, DELETE and TRUNCATE, so
-- neither a bug nor someone with psql rewrites history without dropping the
-- triggers first (which a review of the schema shows).
--
-- workspace_id deliberately has no foreign key. Every other table cascades
-- when its workspace is deleted; the audit trail must outlive what it
-- describes (deleting a workspace is itself an event worth keeping), and a
-- cascading delete would in any case be refused by the triggers below and
-- so block the workspace delete. AuditLog.Append checks that the workspace
-- exists instead.

-- +goose Up
CREATE TABLE audit_log (
    id           text        PRIMARY KEY,
    workspace_id text        NOT NULL, -- no foreign key: rows outlive their workspace
    actor        text        NOT NULL,
    action       text        NOT NULL,
    target       text        NOT NULL, -- '' when nothing in particular
    details      jsonb,                -- object, NULL when none
    created_at   timestamptz NOT NULL
);
-- Serves List: one workspace, newest first, keyset paging on (created_at, id).
CREATE INDEX audit_log_workspace_time ON audit_log (workspace_id, created_at DESC, id COLLATE "C" DESC);

-- +goose StatementBegin
CREATE FUNCTION audit_log_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_log is append-only: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER audit_log_no_update_delete BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
-- Row triggers do not fire on TRUNCATE.
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();

-- +goose Down
DROP TABLE audit_log;
DROP FUNCTION audit_log_append_only();
