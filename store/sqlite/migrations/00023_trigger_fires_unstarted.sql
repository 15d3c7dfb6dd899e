-- Fires left with neither a run nor an error (their scheduler stopped
-- between winning the tick and recording its run) are what every
-- scheduler's sweep looks for (store.Triggers.Unstarted); the partial index
-- keeps that query to those few rows however many ticks have fired. Same
-- conventions as 00001: INTEGER microseconds, STRICT tables.

-- +goose Up
CREATE INDEX trigger_fires_unstarted ON trigger_fires (created_at) WHERE run_id = '' AND error = '';

-- +goose Down
DROP INDEX trigger_fires_unstarted;
