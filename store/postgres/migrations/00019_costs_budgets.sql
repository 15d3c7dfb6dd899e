-- Costs, budgets and the usage rollup.
--
-- usage_records gain the cost of each request (bigint nano-units of the
-- price table's currency), whether its model was priced, and the workflow
-- a workflow run's request belonged to. Rows written before this
-- migration carry no cost and count as unpriced.
--
-- usage_daily holds the totals Usage.Rollup folds old detail rows into,
-- one row per workspace, UTC day (day: its first instant) and the columns
-- the usage groups total by.
--
-- budget_spend is the running count of each workspace's month (month:
-- "2026-12", UTC) that budget checks read instead of summing usage rows:
-- every usage insert adds to it in the same transaction; a budget reset
-- zeroes it. It starts with the months already recorded.
--
-- workspace_budgets holds a workspace's monthly limits (0: none), whether
-- they were set through the API (custom false: the configuration's
-- default applies), the last reset and the month of each 80 % warning.

-- +goose Up
ALTER TABLE usage_records ADD COLUMN cost bigint NOT NULL DEFAULT 0;
ALTER TABLE usage_records ADD COLUMN unpriced boolean NOT NULL DEFAULT true;
ALTER TABLE usage_records ADD COLUMN workflow text NOT NULL DEFAULT '';

CREATE TABLE usage_daily (
    workspace_id  text        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    day           timestamptz NOT NULL,
    agent         text        NOT NULL,
    workflow      text        NOT NULL,
    actor         text        NOT NULL,
    api_key_id    text        NOT NULL,
    end_user      text        NOT NULL,
    provider      text        NOT NULL,
    model         text        NOT NULL,
    requests      bigint      NOT NULL,
    errors        bigint      NOT NULL,
    input_tokens  bigint      NOT NULL,
    output_tokens bigint      NOT NULL,
    cached_tokens bigint      NOT NULL,
    latency_ms    bigint      NOT NULL,
    upstream_ms   bigint      NOT NULL,
    cost          bigint      NOT NULL,
    unpriced      bigint      NOT NULL,
    PRIMARY KEY (workspace_id, day, agent, workflow, actor, api_key_id, end_user, provider, model)
);

CREATE TABLE budget_spend (
    workspace_id text   NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    month        text   NOT NULL,
    tokens       bigint NOT NULL,
    cost         bigint NOT NULL,
    requests     bigint NOT NULL,
    PRIMARY KEY (workspace_id, month)
);

INSERT INTO budget_spend (workspace_id, month, tokens, cost, requests)
SELECT workspace_id, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM'),
       sum(input_tokens + output_tokens), 0, count(*)
FROM usage_records
GROUP BY 1, 2;

CREATE TABLE workspace_budgets (
    workspace_id  text        PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE,
    custom        boolean     NOT NULL,
    tokens        bigint      NOT NULL CHECK (tokens >= 0),
    cost          bigint      NOT NULL CHECK (cost >= 0),
    reset_at      timestamptz, -- NULL: never reset
    warned_tokens text        NOT NULL, -- month of the last 80 % token warning, '' none
    warned_cost   text        NOT NULL,
    updated_at    timestamptz NOT NULL
);

-- +goose Down
DROP TABLE workspace_budgets;
DROP TABLE budget_spend;
DROP TABLE usage_daily;
ALTER TABLE usage_records DROP COLUMN workflow;
ALTER TABLE usage_records DROP COLUMN unpriced;
ALTER TABLE usage_records DROP COLUMN cost;
