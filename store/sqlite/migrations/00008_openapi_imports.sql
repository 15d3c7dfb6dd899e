-- OpenAPI documents imported into a workspace through the API
-- (POST /api/tools/openapi), kept so that their tools come back after a
-- restart. The document is the text as sent; the bearer token is sealed by
-- package secret. Same conventions as 00001: INTEGER microseconds, STRICT
-- tables.

-- +goose Up
CREATE TABLE openapi_imports (
    workspace_id TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name         TEXT    NOT NULL,
    document     TEXT    NOT NULL,
    base_url     TEXT    NOT NULL, -- '' keeps the document's servers[0].url
    ciphertext   BLOB,             -- sealed JSON credentials; NULL for none
    key_id       TEXT    NOT NULL, -- '' without ciphertext
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, name)
) STRICT;

-- +goose Down
DROP TABLE openapi_imports;
