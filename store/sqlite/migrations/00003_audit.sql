-- The audit log: guard, PII, credential and administrative events. Same
-- conventions as 00001: INTEGER microseconds, JSON as TEXT, STRICT tables.
--
-- The table is append-only in the database itself, not only in the Go API:
-- triggers abort every UPDATE and DELETE, so neither a bug nor someone with
-- a SQL shell on the file rewrites history without dropping the triggers
-- first (which a review of the schema shows).
--
-- workspace_id deliberately has no foreign key. Every other table cascades
-- when its workspace is deleted; the audit trail must outlive what it
-- describes (deleting a workspace is itself an event worth keeping), and a
-- cascading delete would in any case be refused by the triggers below and
-- so block the workspace delete. AuditLog.Append checks that the workspace
-- exists instead.

-- +goose Up
CREATE TABLE audit_log (
    id           TEXT    PRIMARY KEY,
    workspace_id TEXT    NOT NULL, -- no foreign key: rows outlive their workspace
    actor        TEXT    NOT NULL,
    action       TEXT    NOT NULL,
    target       TEXT    NOT NULL, -- '' when nothing in particular
    details      TEXT,             -- JSON object, NULL when none
    created_at   INTEGER NOT NULL
) STRICT;
-- Serves List: one workspace, newest first, keyset paging on (created_at, id).
CREATE INDEX audit_log_workspace_time ON audit_log (workspace_id, created_at DESC, id DESC);

-- +goose StatementBegin
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;
-- +goose StatementEnd

-- +goose Down
DROP TABLE audit_log;
