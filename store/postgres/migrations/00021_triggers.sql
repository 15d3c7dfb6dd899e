-- Triggers (package trigger): cron schedules and signed webhooks that start
-- runs. trigger_fires holds one row per fired tick, its primary key
-- (trigger_id, tick) being what lets exactly one of several schedulers win
-- a tick; trigger_deliveries one row per accepted webhook delivery id, so a
-- redelivery finds the first run. runs.trigger_id names the trigger that
-- started a run (no foreign key, as workflow_id and task_id). Same
-- conventions as 00001: unqualified tables, timestamptz, jsonb.

-- +goose Up
CREATE TABLE triggers (
    id                text        PRIMARY KEY,
    workspace_id      text        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name              text        NOT NULL,
    kind              text        NOT NULL CHECK (kind IN ('schedule', 'webhook')),
    workflow_id       text,                 -- the target: a workflow, or
    agent             text,                 -- an agent by name
    input             jsonb,                -- NULL for none
    schedule          text        NOT NULL, -- cron spec; '' for a webhook
    timezone          text        NOT NULL, -- IANA zone; '' is UTC
    misfire           text        NOT NULL CHECK (misfire IN ('skip', 'catch_up_once')),
    enabled           boolean     NOT NULL,
    secret_ciphertext bytea,                -- webhook secret sealed by package secret
    key_id            text        NOT NULL,
    created_at        timestamptz NOT NULL,
    updated_at        timestamptz NOT NULL,
    UNIQUE (workspace_id, name),
    UNIQUE (workspace_id, id)
);

CREATE TABLE trigger_fires (
    workspace_id text        NOT NULL,
    trigger_id   text        NOT NULL,
    tick         timestamptz NOT NULL,
    missed       integer     NOT NULL,
    owner        text        NOT NULL,
    run_id       text        NOT NULL, -- '' until the run started
    error        text        NOT NULL,
    created_at   timestamptz NOT NULL,
    PRIMARY KEY (trigger_id, tick),
    FOREIGN KEY (workspace_id, trigger_id) REFERENCES triggers (workspace_id, id) ON DELETE CASCADE
);

CREATE TABLE trigger_deliveries (
    workspace_id text        NOT NULL,
    trigger_id   text        NOT NULL,
    delivery_id  text        NOT NULL,
    run_id       text        NOT NULL, -- '' while the run is starting
    created_at   timestamptz NOT NULL,
    PRIMARY KEY (trigger_id, delivery_id),
    FOREIGN KEY (workspace_id, trigger_id) REFERENCES triggers (workspace_id, id) ON DELETE CASCADE
);

ALTER TABLE runs ADD COLUMN trigger_id text;
CREATE INDEX runs_trigger ON runs (trigger_id, created_at) WHERE trigger_id IS NOT NULL;

-- +goose Down
DROP INDEX runs_trigger;
ALTER TABLE runs DROP COLUMN trigger_id;
DROP TABLE trigger_deliveries;
DROP TABLE trigger_fires;
DROP TABLE triggers;
