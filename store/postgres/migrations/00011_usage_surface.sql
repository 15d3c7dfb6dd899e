-- Usage records say which surface ran the agent (openai, chat, mcp, a2a,
-- workflow), who asked (actor: apikey:<id>, oauth:<client>, user:<id>,
-- system:<name>) and the workflow run an agent node belonged to, so every
-- way of running an agent is accounted for the same way. Existing rows
-- keep empty strings.

-- +goose Up
ALTER TABLE usage_records ADD COLUMN surface TEXT NOT NULL DEFAULT '';
ALTER TABLE usage_records ADD COLUMN actor TEXT NOT NULL DEFAULT '';
ALTER TABLE usage_records ADD COLUMN run_id TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE usage_records DROP COLUMN run_id;
ALTER TABLE usage_records DROP COLUMN actor;
ALTER TABLE usage_records DROP COLUMN surface;
