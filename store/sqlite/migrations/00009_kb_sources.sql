-- The files ingested into each knowledge base, one row per file name,
-- moved out of knowledge_bases.settings ("sources"), where every ingest
-- rewrote the whole list and two processes ingesting into one base could
-- overwrite each other's entry. Same conventions as 00001: INTEGER
-- microseconds, JSON as TEXT, STRICT tables.

-- +goose Up
CREATE TABLE kb_sources (
    kb_id      TEXT    NOT NULL REFERENCES knowledge_bases (id) ON DELETE CASCADE,
    name       TEXT    NOT NULL,
    documents  INTEGER NOT NULL CHECK (documents >= 0),
    chunks     INTEGER NOT NULL CHECK (chunks >= 0),
    record     TEXT,             -- package kb's JSON: the documents the file produced
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (kb_id, name)
) STRICT;

INSERT INTO kb_sources (kb_id, name, documents, chunks, record, updated_at)
SELECT kb.id, s.key,
       max(0, coalesce(json_extract(s.value, '$.documents'), 0)),
       max(0, coalesce(json_extract(s.value, '$.chunks'), 0)),
       s.value, kb.updated_at
FROM knowledge_bases kb,
     json_each(CASE WHEN json_valid(kb.settings) AND json_type(kb.settings, '$.sources') = 'object'
                    THEN kb.settings ELSE '{}' END, '$.sources') s
WHERE json_type(s.value) = 'object';

UPDATE knowledge_bases
SET settings = nullif(json_remove(settings, '$.sources'), '{}')
WHERE CASE WHEN json_valid(settings) THEN json_type(settings, '$.sources') IS NOT NULL ELSE 0 END;

-- +goose Down
UPDATE knowledge_bases
SET settings = json_set(coalesce(settings, '{}'), '$.sources',
    json((SELECT json_group_object(s.name, json(coalesce(s.record, '{}'))) FROM kb_sources s WHERE s.kb_id = knowledge_bases.id)))
WHERE EXISTS (SELECT 1 FROM kb_sources s WHERE s.kb_id = knowledge_bases.id);
DROP TABLE kb_sources;
