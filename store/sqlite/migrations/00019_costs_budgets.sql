-- Costs, budgets and the usage rollup.
--
-- usage_records gain the cost of each request (INTEGER nano-units of the
-- price table's currency), whether its model was priced, and the workflow
-- a workflow run's request belonged to. Rows written before this
-- migration carry no cost and count as unpriced.
--
-- usage_daily holds the totals Usage.Rollup folds old detail rows into,
-- one row per workspace, UTC day (day: microseconds of its first
-- instant) and the columns the usage groups total by.
--
-- budget_spend is the running count of each workspace's month (month:
-- "2026-12", UTC) that budget checks read instead of summing usage rows:
-- every usage insert adds to it in the same transaction; a budget reset
-- zeroes it. It starts with the months already recorded.
--
-- workspace_budgets holds a workspace's monthly limits (0: none), whether
-- they were set through the API (custom = 0: the configuration's default
-- applies), the last reset and the month of each 80 % warning sent.

-- +goose Up
ALTER TABLE usage_records ADD COLUMN cost INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_records ADD COLUMN unpriced INTEGER NOT NULL DEFAULT 1;
ALTER TABLE usage_records ADD COLUMN workflow TEXT NOT NULL DEFAULT '';

CREATE TABLE usage_daily (
    workspace_id  TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    day           INTEGER NOT NULL,
    agent         TEXT    NOT NULL,
    workflow      TEXT    NOT NULL,
    actor         TEXT    NOT NULL,
    api_key_id    TEXT    NOT NULL,
    end_user      TEXT    NOT NULL,
    provider      TEXT    NOT NULL,
    model         TEXT    NOT NULL,
    requests      INTEGER NOT NULL,
    errors        INTEGER NOT NULL,
    input_tokens  INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cached_tokens INTEGER NOT NULL,
    latency_ms    INTEGER NOT NULL,
    upstream_ms   INTEGER NOT NULL,
    cost          INTEGER NOT NULL,
    unpriced      INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, day, agent, workflow, actor, api_key_id, end_user, provider, model)
) STRICT;

CREATE TABLE budget_spend (
    workspace_id TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    month        TEXT    NOT NULL,
    tokens       INTEGER NOT NULL,
    cost         INTEGER NOT NULL,
    requests     INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, month)
) STRICT;

INSERT INTO budget_spend (workspace_id, month, tokens, cost, requests)
SELECT workspace_id, strftime('%Y-%m', created_at / 1000000, 'unixepoch'),
       sum(input_tokens + output_tokens), 0, count(*)
FROM usage_records
GROUP BY 1, 2;

CREATE TABLE workspace_budgets (
    workspace_id  TEXT    PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE,
    custom        INTEGER NOT NULL,
    tokens        INTEGER NOT NULL CHECK (tokens >= 0),
    cost          INTEGER NOT NULL CHECK (cost >= 0),
    reset_at      INTEGER NOT NULL, -- 0: never reset
    warned_tokens TEXT    NOT NULL, -- month of the last 80 % token warning, '' none
    warned_cost   TEXT    NOT NULL,
    updated_at    INTEGER NOT NULL
) STRICT;

-- +goose Down
DROP TABLE workspace_budgets;
DROP TABLE budget_spend;
DROP TABLE usage_daily;
ALTER TABLE usage_records DROP COLUMN workflow;
ALTER TABLE usage_records DROP COLUMN unpriced;
ALTER TABLE usage_records DROP COLUMN cost;
