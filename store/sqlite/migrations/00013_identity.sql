-- People: users, their external identities (OpenID subjects, LINE user
-- ids), workspace members with roles, browser sessions, invitations and
-- one-time sign-in links; API keys gain a role, a scope and the user they
-- act for. Same conventions as 00001: INTEGER microseconds, STRICT tables.
--
-- Tokens (sessions, invitations, sign-in links) are stored as their
-- SHA-256 only, as API keys are: a copy of the database signs nobody in.
--
-- Existing API keys become owners: before roles existed a key could do
-- everything in its workspace, and an upgrade must not take that away
-- from the scripts using it. Keys made from now on default to member
-- (store.Core writes the role of every new key; the column default below
-- says the same for anything else).

-- +goose Up
CREATE TABLE users (
    id            TEXT    PRIMARY KEY,
    -- Normalized (trimmed, lower case), so one address is one account.
    email         TEXT    NOT NULL UNIQUE,
    display_name  TEXT    NOT NULL,
    -- PHC string ($argon2id$...); '' for users without a password.
    password_hash TEXT    NOT NULL,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    disabled_at   INTEGER,
    -- The sign-in throttle, shared by every process (store.LoginState).
    failed_logins INTEGER NOT NULL DEFAULT 0 CHECK (failed_logins >= 0),
    failed_since  INTEGER,
    lockouts      INTEGER NOT NULL DEFAULT 0 CHECK (lockouts >= 0),
    locked_until  INTEGER,
    last_login_at INTEGER
) STRICT;

CREATE TABLE user_identities (
    provider   TEXT    NOT NULL, -- OpenID issuer URL, or a channel: 'line'
    subject    TEXT    NOT NULL,
    user_id    TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (provider, subject)
) STRICT;
CREATE INDEX user_identities_user ON user_identities (user_id);

CREATE TABLE members (
    workspace_id TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    user_id      TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role         TEXT    NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'guest')),
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, user_id)
) STRICT;
CREATE INDEX members_user ON members (user_id);

CREATE TABLE sessions (
    id              BLOB    PRIMARY KEY, -- SHA-256 of the session token
    user_id         TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    csrf_token      TEXT    NOT NULL,
    created_at      INTEGER NOT NULL,
    last_seen_at    INTEGER NOT NULL,
    -- Never after expires_at, so it alone says when a session is over.
    idle_expires_at INTEGER NOT NULL,
    expires_at      INTEGER NOT NULL,
    user_agent      TEXT    NOT NULL,
    remote_addr     TEXT    NOT NULL,
    CHECK (idle_expires_at <= expires_at)
) STRICT, WITHOUT ROWID;
CREATE INDEX sessions_user ON sessions (user_id);
CREATE INDEX sessions_idle_expiry ON sessions (idle_expires_at);

CREATE TABLE invitations (
    id           TEXT    PRIMARY KEY,
    token_hash   BLOB    NOT NULL UNIQUE,
    workspace_id TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    role         TEXT    NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'guest')),
    email        TEXT    NOT NULL, -- '' when anyone holding the link may accept
    -- The inviting actor ("user:<id>", "cli"); no foreign key, the
    -- invitation outlives a user who leaves.
    created_by   TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL,
    accepted_at  INTEGER,
    accepted_by  TEXT    NOT NULL DEFAULT ''
) STRICT;
CREATE INDEX invitations_workspace ON invitations (workspace_id, created_at);

CREATE TABLE sign_in_links (
    id         TEXT    PRIMARY KEY,
    token_hash BLOB    NOT NULL UNIQUE,
    user_id    TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at    INTEGER
) STRICT;

ALTER TABLE api_keys ADD COLUMN role TEXT NOT NULL DEFAULT 'member'
    CHECK (role IN ('owner', 'admin', 'member', 'guest'));
ALTER TABLE api_keys ADD COLUMN scope TEXT NOT NULL DEFAULT '' CHECK (scope IN ('', 'chat', 'read'));
ALTER TABLE api_keys ADD COLUMN user_id TEXT REFERENCES users (id) ON DELETE CASCADE;
UPDATE api_keys SET role = 'owner';

-- +goose Down
-- SQLite cannot drop a column holding a foreign key: rebuild the table.
CREATE TABLE api_keys_00012 (
    id           TEXT    PRIMARY KEY,
    workspace_id TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name         TEXT    NOT NULL,
    prefix       TEXT    NOT NULL,
    hash         BLOB    NOT NULL UNIQUE,
    created_at   INTEGER NOT NULL,
    last_used_at INTEGER,
    revoked_at   INTEGER
) STRICT;
INSERT INTO api_keys_00012 SELECT id, workspace_id, name, prefix, hash, created_at, last_used_at, revoked_at FROM api_keys;
DROP TABLE api_keys;
ALTER TABLE api_keys_00012 RENAME TO api_keys;
CREATE INDEX api_keys_workspace ON api_keys (workspace_id, created_at);
DROP TABLE sign_in_links;
DROP TABLE invitations;
DROP TABLE sessions;
DROP TABLE members;
DROP TABLE user_identities;
DROP TABLE users;
