-- The files ingested into each knowledge base, one row per file name,
-- moved out of knowledge_bases.settings ("sources"), where every ingest
-- rewrote the whole list and two processes ingesting into one base could
-- overwrite each other's entry. Same conventions as 00001: unqualified
-- tables, timestamptz, jsonb.

-- +goose Up
CREATE TABLE kb_sources (
    kb_id      text        NOT NULL REFERENCES knowledge_bases (id) ON DELETE CASCADE,
    name       text        NOT NULL,
    documents  integer     NOT NULL CHECK (documents >= 0),
    chunks     integer     NOT NULL CHECK (chunks >= 0),
    record     jsonb,                 -- package kb's JSON: the documents the file produced
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (kb_id, name)
);

INSERT INTO kb_sources (kb_id, name, documents, chunks, record, updated_at)
SELECT kb.id, s.key,
       GREATEST(0, coalesce((s.value->>'documents')::integer, 0)),
       GREATEST(0, coalesce((s.value->>'chunks')::integer, 0)),
       s.value, kb.updated_at
FROM knowledge_bases kb,
     jsonb_each(CASE WHEN jsonb_typeof(kb.settings->'sources') = 'object'
                     THEN kb.settings->'sources' ELSE '{}'::jsonb END) s
WHERE jsonb_typeof(s.value) = 'object';

UPDATE knowledge_bases
SET settings = nullif(settings - 'sources', '{}'::jsonb)
WHERE jsonb_typeof(settings) = 'object' AND settings->'sources' IS NOT NULL;

-- +goose Down
UPDATE knowledge_bases kb
SET settings = coalesce(kb.settings, '{}'::jsonb) || jsonb_build_object('sources',
    (SELECT jsonb_object_agg(s.name, coalesce(s.record, '{}'::jsonb)) FROM kb_sources s WHERE s.kb_id = kb.id))
WHERE EXISTS (SELECT 1 FROM kb_sources s WHERE s.kb_id = kb.id);
DROP TABLE kb_sources;
