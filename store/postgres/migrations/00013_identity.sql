-- People: users, their external identities (OpenID subjects, LINE user
-- ids), workspace members with roles, browser sessions, invitations and
-- one-time sign-in links; API keys gain a role, a scope and the user they
-- act for. Same conventions as 00001: unqualified tables, timestamptz.
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
    id            text        PRIMARY KEY,
    -- Normalized (trimmed, lower case), so one address is one account.
    email         text        NOT NULL UNIQUE,
    display_name  text        NOT NULL,
    -- PHC string ($argon2id$...); '' for users without a password.
    password_hash text        NOT NULL,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL,
    disabled_at   timestamptz,
    -- The sign-in throttle, shared by every process (store.LoginState).
    failed_logins integer     NOT NULL DEFAULT 0 CHECK (failed_logins >= 0),
    failed_since  timestamptz,
    lockouts      integer     NOT NULL DEFAULT 0 CHECK (lockouts >= 0),
    locked_until  timestamptz,
    last_login_at timestamptz
);

CREATE TABLE user_identities (
    provider   text        NOT NULL, -- OpenID issuer URL, or a channel: 'line'
    subject    text        NOT NULL,
    user_id    text        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (provider, subject)
);
CREATE INDEX user_identities_user ON user_identities (user_id);

CREATE TABLE members (
    workspace_id text        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    user_id      text        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role         text        NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'guest')),
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    PRIMARY KEY (workspace_id, user_id)
);
CREATE INDEX members_user ON members (user_id);

CREATE TABLE sessions (
    id              bytea       PRIMARY KEY, -- SHA-256 of the session token
    user_id         text        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    csrf_token      text        NOT NULL,
    created_at      timestamptz NOT NULL,
    last_seen_at    timestamptz NOT NULL,
    -- Never after expires_at, so it alone says when a session is over.
    idle_expires_at timestamptz NOT NULL,
    expires_at      timestamptz NOT NULL,
    user_agent      text        NOT NULL,
    remote_addr     text        NOT NULL,
    CHECK (idle_expires_at <= expires_at)
);
CREATE INDEX sessions_user ON sessions (user_id);
CREATE INDEX sessions_idle_expiry ON sessions (idle_expires_at);

CREATE TABLE invitations (
    id           text        PRIMARY KEY,
    token_hash   bytea       NOT NULL UNIQUE,
    workspace_id text        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    role         text        NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'guest')),
    email        text        NOT NULL, -- '' when anyone holding the link may accept
    -- The inviting actor ("user:<id>", "cli"); no foreign key, the
    -- invitation outlives a user who leaves.
    created_by   text        NOT NULL,
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    accepted_at  timestamptz,
    accepted_by  text        NOT NULL DEFAULT ''
);
CREATE INDEX invitations_workspace ON invitations (workspace_id, created_at);

CREATE TABLE sign_in_links (
    id         text        PRIMARY KEY,
    token_hash bytea       NOT NULL UNIQUE,
    user_id    text        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at    timestamptz
);

ALTER TABLE api_keys ADD COLUMN role text NOT NULL DEFAULT 'member'
    CHECK (role IN ('owner', 'admin', 'member', 'guest'));
ALTER TABLE api_keys ADD COLUMN scope text NOT NULL DEFAULT '' CHECK (scope IN ('', 'chat', 'read'));
ALTER TABLE api_keys ADD COLUMN user_id text REFERENCES users (id) ON DELETE CASCADE;
UPDATE api_keys SET role = 'owner';

-- +goose Down
ALTER TABLE api_keys DROP COLUMN user_id;
ALTER TABLE api_keys DROP COLUMN scope;
ALTER TABLE api_keys DROP COLUMN role;
DROP TABLE sign_in_links;
DROP TABLE invitations;
DROP TABLE sessions;
DROP TABLE members;
DROP TABLE user_identities;
DROP TABLE users;
