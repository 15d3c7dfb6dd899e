-- Tasks, their append-only events, approvals, the steps of their
-- evidence ledger and the outbox of notifications (issue 15, the control
-- plane). Same conventions as 00001: unqualified tables, timestamptz, jsonb.

-- +goose Up
-- event_seq and step_seq are the seqs of the newest event and step: an
-- append moves them in the statement that also checks the workspace, so
-- concurrent appends never share a seq. parent_task_id has no foreign key
-- (the insert checks it, in the workspace); deleting the workspace
-- deletes every task.
CREATE TABLE tasks (
    id               text        PRIMARY KEY,
    workspace_id     text        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    title            text        NOT NULL,
    detail           text        NOT NULL,
    intent           jsonb,                  -- object, NULL before it is extracted
    status           text        NOT NULL CHECK (status IN ('open', 'planning', 'awaiting_approval', 'running',
                         'done', 'failed', 'cancelled', 'expired')),
    capability       text        NOT NULL CHECK (capability IN ('low', 'medium', 'high')),
    assignee_user_id text        NOT NULL, -- '' when nobody is assigned
    source           text        NOT NULL,
    source_ref       text,                   -- NULL when the channel gave no message id
    parent_task_id   text,
    due_at           timestamptz,
    created_by       text        NOT NULL,
    event_seq        bigint      NOT NULL CHECK (event_seq >= 0),
    step_seq         bigint      NOT NULL CHECK (step_seq >= 0),
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL
);
-- A redelivered message (LINE's webhookEventId) cannot make a second task.
CREATE UNIQUE INDEX tasks_source_ref ON tasks (workspace_id, source, source_ref) WHERE source_ref IS NOT NULL;
-- List pages a workspace's tasks, newest first.
CREATE INDEX tasks_time ON tasks (workspace_id, created_at, id);
CREATE INDEX tasks_status ON tasks (workspace_id, status, created_at);

CREATE TABLE task_events (
    task_id    text        NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    seq        bigint      NOT NULL CHECK (seq >= 1),
    type       text        NOT NULL,
    actor      text        NOT NULL,
    payload    jsonb,                  -- NULL when the event has none
    created_at timestamptz NOT NULL,
    PRIMARY KEY (task_id, seq)
);

-- run_id names a row of runs without a foreign key, as runs.workflow_id
-- does; the insert checks it is the workspace's.
CREATE TABLE approvals (
    id               text        PRIMARY KEY,
    workspace_id     text        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    task_id          text        NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    run_id           text,
    step_key         text,                   -- NULL when no step of a plan asks
    capability       text        NOT NULL CHECK (capability IN ('low', 'medium', 'high')),
    summary          text        NOT NULL,
    status           text        NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'expired')),
    requested_by     text        NOT NULL,
    approver_user_id text        NOT NULL, -- '' until decided
    decided_at       timestamptz,
    expires_at       timestamptz,
    created_at       timestamptz NOT NULL
);
-- A step asks once: a resumed executor finds its approval.
CREATE UNIQUE INDEX approvals_step ON approvals (task_id, step_key) WHERE step_key IS NOT NULL;
CREATE INDEX approvals_time ON approvals (workspace_id, created_at, id);
-- ExpireDue scans the pending approvals that can expire.
CREATE INDEX approvals_due ON approvals (expires_at) WHERE status = 'pending' AND expires_at IS NOT NULL;

-- The evidence ledger: a step is inserted before its side effect and
-- finished once; (workspace_id, idempotency_key) is what makes a resumed
-- executor see an effect it already began.
CREATE TABLE task_steps (
    id              text        PRIMARY KEY,
    workspace_id    text        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    task_id         text        NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    run_id          text,
    seq             bigint      NOT NULL CHECK (seq >= 1),
    idempotency_key text        NOT NULL,
    tool            text        NOT NULL,
    capability      text        NOT NULL CHECK (capability IN ('low', 'medium', 'high')),
    input           jsonb,                  -- NULL when none
    output          jsonb,                  -- NULL until finished with one
    undo            jsonb,                  -- NULL when the step cannot be undone
    status          text        NOT NULL CHECK (status IN ('pending', 'ok', 'error', 'skipped', 'compensated')),
    error           text        NOT NULL,
    created_at      timestamptz NOT NULL,
    finished_at     timestamptz,
    UNIQUE (workspace_id, idempotency_key),
    UNIQUE (task_id, seq)
);

-- The outbox of messages owed on a channel (approval cards, results,
-- reminders): written with the change that causes them, sent by a worker.
CREATE TABLE notifications (
    id           text        PRIMARY KEY,
    workspace_id text        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    task_id      text        REFERENCES tasks (id) ON DELETE CASCADE, -- NULL when about no task
    channel      text        NOT NULL,
    target       text        NOT NULL,
    kind         text        NOT NULL,
    payload      jsonb,                  -- NULL when none
    status       text        NOT NULL CHECK (status IN ('pending', 'sent', 'failed')),
    error        text        NOT NULL,
    send_at      timestamptz,            -- NULL: due at once
    sent_at      timestamptz,
    created_at   timestamptz NOT NULL
);
CREATE INDEX notifications_time ON notifications (workspace_id, created_at, id);
-- Due scans the pending notifications of every workspace.
CREATE INDEX notifications_due ON notifications (coalesce(send_at, created_at), id) WHERE status = 'pending';

-- +goose Down
DROP TABLE notifications;
DROP TABLE task_steps;
DROP TABLE approvals;
DROP TABLE task_events;
DROP TABLE tasks;
