-- The registry of executing processes (`agentcraft worker`, and serve when
-- it executes runs): each heartbeats its row; `agentcraft workers` and
-- GET /api/workers read it with the run leases. Not workspace-scoped. Same
-- conventions as 00001: INTEGER microseconds, JSON as TEXT, STRICT tables.

-- +goose Up
CREATE TABLE workers (
    id         TEXT    PRIMARY KEY, -- the lease owner's name
    kind       TEXT    NOT NULL,    -- worker | serve
    host       TEXT    NOT NULL,
    pid        INTEGER NOT NULL,
    version    TEXT    NOT NULL,
    started_at INTEGER NOT NULL,
    seen_at    INTEGER NOT NULL,
    runs       TEXT    NOT NULL     -- JSON array of the runs it executes
) STRICT;

-- +goose Down
DROP TABLE workers;
