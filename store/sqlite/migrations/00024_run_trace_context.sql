-- The W3C trace context (traceparent, tracestate) of the request that
-- started a run, written only while tracing is on: the process that
-- executes the run from the queue continues that trace (package
-- controlplane). NULL: no trace to continue. Same conventions as 00001.

-- +goose Up
ALTER TABLE runs ADD COLUMN traceparent TEXT;
ALTER TABLE runs ADD COLUMN tracestate TEXT;

-- +goose Down
ALTER TABLE runs DROP COLUMN tracestate;
ALTER TABLE runs DROP COLUMN traceparent;
