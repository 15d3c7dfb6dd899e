-- The registry of executing processes (`agentcraft worker`, and serve when
-- it executes runs): each heartbeats its row; `agentcraft workers` and
-- GET /api/workers read it with the run leases. Not workspace-scoped. Same
-- conventions as 00001: unqualified tables, timestamptz, jsonb.

-- +goose Up
CREATE TABLE workers (
    id         text        PRIMARY KEY, -- the lease owner's name
    kind       text        NOT NULL,    -- worker | serve
    host       text        NOT NULL,
    pid        integer     NOT NULL,
    version    text        NOT NULL,
    started_at timestamptz NOT NULL,
    seen_at    timestamptz NOT NULL,
    runs       jsonb       NOT NULL     -- array of the runs it executes
);

-- +goose Down
DROP TABLE workers;
