-- Tasks, their append-only events, approvals, the steps of their
-- evidence ledger and the outbox of notifications (issue 15, the control
-- plane). Same conventions as 00001: INTEGER microseconds, JSON as TEXT, STRICT tables.

-- +goose Up
-- event_seq and step_seq are the seqs of the newest event and step: an
-- append moves them in the statement that also checks the workspace, so
-- concurrent appends never share a seq. parent_task_id has no foreign key
-- (the insert checks it, in the workspace); deleting the workspace
-- deletes every task.
CREATE TABLE tasks (
    id               TEXT    PRIMARY KEY,
    workspace_id     TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    title            TEXT    NOT NULL,
    detail           TEXT    NOT NULL,
    intent           TEXT,             -- JSON object, NULL before it is extracted
    status           TEXT    NOT NULL CHECK (status IN ('open', 'planning', 'awaiting_approval', 'running',
                         'done', 'failed', 'cancelled', 'expired')),
    capability       TEXT    NOT NULL CHECK (capability IN ('low', 'medium', 'high')),
    assignee_user_id TEXT    NOT NULL, -- '' when nobody is assigned
    source           TEXT    NOT NULL,
    source_ref       TEXT,             -- NULL when the channel gave no message id
    parent_task_id   TEXT,
    due_at           INTEGER,
    created_by       TEXT    NOT NULL,
    event_seq        INTEGER NOT NULL CHECK (event_seq >= 0),
    step_seq         INTEGER NOT NULL CHECK (step_seq >= 0),
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL
) STRICT;
-- A redelivered message (LINE's webhookEventId) cannot make a second task.
CREATE UNIQUE INDEX tasks_source_ref ON tasks (workspace_id, source, source_ref) WHERE source_ref IS NOT NULL;
-- List pages a workspace's tasks, newest first.
CREATE INDEX tasks_time ON tasks (workspace_id, created_at, id);
CREATE INDEX tasks_status ON tasks (workspace_id, status, created_at);

CREATE TABLE task_events (
    task_id    TEXT    NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL CHECK (seq >= 1),
    type       TEXT    NOT NULL,
    actor      TEXT    NOT NULL,
    payload    TEXT,             -- JSON, NULL when the event has none
    created_at INTEGER NOT NULL,
    PRIMARY KEY (task_id, seq)
) STRICT, WITHOUT ROWID;

-- run_id names a row of runs without a foreign key, as runs.workflow_id
-- does; the insert checks it is the workspace's.
CREATE TABLE approvals (
    id               TEXT    PRIMARY KEY,
    workspace_id     TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    task_id          TEXT    NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    run_id           TEXT,
    step_key         TEXT,             -- NULL when no step of a plan asks
    capability       TEXT    NOT NULL CHECK (capability IN ('low', 'medium', 'high')),
    summary          TEXT    NOT NULL,
    status           TEXT    NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'expired')),
    requested_by     TEXT    NOT NULL,
    approver_user_id TEXT    NOT NULL, -- '' until decided
    decided_at       INTEGER,
    expires_at       INTEGER,
    created_at       INTEGER NOT NULL
) STRICT;
-- A step asks once: a resumed executor finds its approval.
CREATE UNIQUE INDEX approvals_step ON approvals (task_id, step_key) WHERE step_key IS NOT NULL;
CREATE INDEX approvals_time ON approvals (workspace_id, created_at, id);
-- ExpireDue scans the pending approvals that can expire.
CREATE INDEX approvals_due ON approvals (expires_at) WHERE status = 'pending' AND expires_at IS NOT NULL;

-- The evidence ledger: a step is inserted before its side effect and
-- finished once; (workspace_id, idempotency_key) is what makes a resumed
-- executor see an effect it already began.
CREATE TABLE task_steps (
    id              TEXT    PRIMARY KEY,
    workspace_id    TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    task_id         TEXT    NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    run_id          TEXT,
    seq             INTEGER NOT NULL CHECK (seq >= 1),
    idempotency_key TEXT    NOT NULL,
    tool            TEXT    NOT NULL,
    capability      TEXT    NOT NULL CHECK (capability IN ('low', 'medium', 'high')),
    input           TEXT,             -- JSON, NULL when none
    output          TEXT,             -- JSON, NULL until finished with one
    undo            TEXT,             -- JSON, NULL when the step cannot be undone
    status          TEXT    NOT NULL CHECK (status IN ('pending', 'ok', 'error', 'skipped', 'compensated')),
    error           TEXT    NOT NULL,
    created_at      INTEGER NOT NULL,
    finished_at     INTEGER,
    UNIQUE (workspace_id, idempotency_key),
    UNIQUE (task_id, seq)
) STRICT;

-- The outbox of messages owed on a channel (approval cards, results,
-- reminders): written with the change that causes them, sent by a worker.
CREATE TABLE notifications (
    id           TEXT    PRIMARY KEY,
    workspace_id TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    task_id      TEXT    REFERENCES tasks (id) ON DELETE CASCADE, -- NULL when about no task
    channel      TEXT    NOT NULL,
    target       TEXT    NOT NULL,
    kind         TEXT    NOT NULL,
    payload      TEXT,             -- JSON, NULL when none
    status       TEXT    NOT NULL CHECK (status IN ('pending', 'sent', 'failed')),
    error        TEXT    NOT NULL,
    send_at      INTEGER,          -- NULL: due at once
    sent_at      INTEGER,
    created_at   INTEGER NOT NULL
) STRICT;
CREATE INDEX notifications_time ON notifications (workspace_id, created_at, id);
-- Due scans the pending notifications of every workspace.
CREATE INDEX notifications_due ON notifications (coalesce(send_at, created_at), id) WHERE status = 'pending';

-- +goose Down
DROP TABLE notifications;
DROP TABLE task_steps;
DROP TABLE approvals;
DROP TABLE task_events;
DROP TABLE tasks;
