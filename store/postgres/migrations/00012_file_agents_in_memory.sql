-- agentcraft.yaml's agents are no longer stored: each process holds the
-- agents of the file it read, so that a process started with another file
-- cannot delete or change them. The rows earlier versions upserted for
-- them (source 'config') are dropped; the file still defines them.

-- +goose Up
DELETE FROM agents WHERE source = 'config';

-- +goose Down
SELECT 1;
