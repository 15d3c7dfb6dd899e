-- Triggers (package trigger): cron schedules and signed webhooks that start
-- runs. trigger_fires holds one row per fired tick, its primary key
-- (trigger_id, tick) being what lets exactly one of several schedulers win
-- a tick; trigger_deliveries one row per accepted webhook delivery id, so a
-- redelivery finds the first run. runs.trigger_id names the trigger that
-- started a run (no foreign key, as workflow_id and task_id). Same
-- conventions as 00001: INTEGER microseconds, JSON as TEXT, STRICT tables.

-- +goose Up
CREATE TABLE triggers (
    id                TEXT    PRIMARY KEY,
    workspace_id      TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name              TEXT    NOT NULL,
    kind              TEXT    NOT NULL CHECK (kind IN ('schedule', 'webhook')),
    workflow_id       TEXT,            -- the target: a workflow, or
    agent             TEXT,            -- an agent by name
    input             TEXT,            -- JSON; NULL for none
    schedule          TEXT    NOT NULL, -- cron spec; '' for a webhook
    timezone          TEXT    NOT NULL, -- IANA zone; '' is UTC
    misfire           TEXT    NOT NULL CHECK (misfire IN ('skip', 'catch_up_once')),
    enabled           INTEGER NOT NULL,
    secret_ciphertext BLOB,            -- webhook secret sealed by package secret
    key_id            TEXT    NOT NULL,
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL,
    UNIQUE (workspace_id, name),
    UNIQUE (workspace_id, id)
) STRICT;

CREATE TABLE trigger_fires (
    workspace_id TEXT    NOT NULL,
    trigger_id   TEXT    NOT NULL,
    tick         INTEGER NOT NULL,
    missed       INTEGER NOT NULL,
    owner        TEXT    NOT NULL,
    run_id       TEXT    NOT NULL, -- '' until the run started
    error        TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (trigger_id, tick),
    FOREIGN KEY (workspace_id, trigger_id) REFERENCES triggers (workspace_id, id) ON DELETE CASCADE
) STRICT;

CREATE TABLE trigger_deliveries (
    workspace_id TEXT    NOT NULL,
    trigger_id   TEXT    NOT NULL,
    delivery_id  TEXT    NOT NULL,
    run_id       TEXT    NOT NULL, -- '' while the run is starting
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (trigger_id, delivery_id),
    FOREIGN KEY (workspace_id, trigger_id) REFERENCES triggers (workspace_id, id) ON DELETE CASCADE
) STRICT;

ALTER TABLE runs ADD COLUMN trigger_id TEXT;
CREATE INDEX runs_trigger ON runs (trigger_id, created_at) WHERE trigger_id IS NOT NULL;

-- +goose Down
DROP INDEX runs_trigger;
ALTER TABLE runs DROP COLUMN trigger_id;
DROP TABLE trigger_deliveries;
DROP TABLE trigger_fires;
DROP TABLE triggers;
