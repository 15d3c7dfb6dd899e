-- OpenAPI documents imported into a workspace through the API
-- (POST /api/tools/openapi), kept so that their tools come back after a
-- restart. The document is the text as sent; the bearer token is sealed by
-- package secret. Same conventions as 00001: unqualified tables,
-- timestamptz.

-- +goose Up
CREATE TABLE openapi_imports (
    workspace_id text        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name         text        NOT NULL,
    document     text        NOT NULL,
    base_url     text        NOT NULL, -- '' keeps the document's servers[0].url
    ciphertext   bytea,                -- sealed JSON credentials; NULL for none
    key_id       text        NOT NULL, -- '' without ciphertext
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    PRIMARY KEY (workspace_id, name)
);

-- +goose Down
DROP TABLE openapi_imports;
