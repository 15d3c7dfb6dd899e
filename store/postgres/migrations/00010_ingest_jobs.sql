-- Ingest jobs record which executor works them (owner), so a restarted
-- process resumes its own interrupted jobs at once instead of waiting for
-- the queue's rescuer, and may end "partial" when some of their files
-- failed. Run checkpoints get an index for paging (store.RunPages).

-- +goose Up
ALTER TABLE ingest_jobs DROP CONSTRAINT ingest_jobs_status_check;
ALTER TABLE ingest_jobs ADD CONSTRAINT ingest_jobs_status_check
    CHECK (status IN ('queued', 'running', 'succeeded', 'partial', 'failed'));
ALTER TABLE ingest_jobs ADD COLUMN owner text NOT NULL DEFAULT '';
-- LiveIngest scans the live jobs of every workspace at start.
CREATE INDEX ingest_jobs_live ON ingest_jobs (created_at) WHERE status IN ('queued', 'running');

-- CheckpointPage reads a run's checkpoints in id order from a cursor: without
-- this index a page of a run with 160k checkpoints sorted them all.
CREATE INDEX run_checkpoints_run ON run_checkpoints (run_id, id);

-- +goose Down
DROP INDEX run_checkpoints_run;
DROP INDEX ingest_jobs_live;
ALTER TABLE ingest_jobs DROP COLUMN owner;
UPDATE ingest_jobs SET status = 'succeeded' WHERE status = 'partial';
ALTER TABLE ingest_jobs DROP CONSTRAINT ingest_jobs_status_check;
ALTER TABLE ingest_jobs ADD CONSTRAINT ingest_jobs_status_check
    CHECK (status IN ('queued', 'running', 'succeeded', 'failed'));
