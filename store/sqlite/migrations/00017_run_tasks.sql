-- A run executes a task's plan (issue 15): runs.task_id names the task,
-- without a foreign key, as workflow_id names its workflow (the task's
-- deletion with its workspace deletes the run too). tasks_status gains the
-- id as tie-breaker, as tasks_time has, so a page of one status is stable.
-- runs.executor names the external executor (worker API) that runs it.
-- tasks.reply_to is where a task's answers go: the channel's address
-- ({"channel": "line", "target": ...}) as a JSON object.

-- +goose Up
ALTER TABLE runs ADD COLUMN task_id TEXT;
ALTER TABLE runs ADD COLUMN executor TEXT;
ALTER TABLE tasks ADD COLUMN reply_to TEXT;
CREATE INDEX runs_task ON runs (task_id, created_at) WHERE task_id IS NOT NULL;
DROP INDEX tasks_status;
CREATE INDEX tasks_status ON tasks (workspace_id, status, created_at, id);

-- +goose Down
DROP INDEX tasks_status;
CREATE INDEX tasks_status ON tasks (workspace_id, status, created_at);
DROP INDEX runs_task;
ALTER TABLE runs DROP COLUMN executor;
ALTER TABLE runs DROP COLUMN task_id;
ALTER TABLE tasks DROP COLUMN reply_to;
