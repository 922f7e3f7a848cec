-- Accounts, credentials and the resources a user owns.
-- Timestamps are unix milliseconds (INTEGER); ids are prefixed random base62.

CREATE TABLE users (
    id            TEXT PRIMARY KEY,
    email         TEXT NOT NULL UNIQUE COLLATE NOCASE,
    name          TEXT NOT NULL DEFAULT '',
    plan          TEXT NOT NULL DEFAULT 'free',
    is_admin      INTEGER NOT NULL DEFAULT 0,
    password_hash TEXT,              -- argon2id PHC string; NULL: no local password
    created_at    INTEGER NOT NULL
);

-- Sign-in through an OIDC provider, keyed by (provider, subject).
CREATE TABLE identities (
    provider   TEXT NOT NULL,
    subject    TEXT NOT NULL,
    user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    email      TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    PRIMARY KEY (provider, subject)
);
CREATE INDEX identities_user ON identities(user_id);

-- One row per signed-in client. Only SHA-256 hashes of tokens are stored.
CREATE TABLE sessions (
    id                 TEXT PRIMARY KEY,
    user_id            TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    access_hash        BLOB NOT NULL UNIQUE,
    access_expires_at  INTEGER NOT NULL,
    refresh_hash       BLOB NOT NULL UNIQUE,
    refresh_expires_at INTEGER NOT NULL,
    created_at         INTEGER NOT NULL
);
CREATE INDEX sessions_user ON sessions(user_id);

-- Refresh tokens already exchanged; presenting one again revokes its session.
CREATE TABLE spent_refresh_tokens (
    hash       BLOB PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    spent_at   INTEGER NOT NULL
);
CREATE INDEX spent_refresh_tokens_session ON spent_refresh_tokens(session_id);

CREATE TABLE api_keys (
    id           TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    key_hash     BLOB NOT NULL UNIQUE,
    prefix       TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    last_used_at INTEGER,
    revoked_at   INTEGER
);
CREATE INDEX api_keys_user ON api_keys(user_id);

CREATE TABLE folders (
    id         TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name       TEXT NOT NULL,
    position   INTEGER NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX folders_user ON folders(user_id, position);

CREATE TABLE channels (
    id             TEXT PRIMARY KEY,
    user_id        TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name           TEXT NOT NULL,
    icon           TEXT NOT NULL DEFAULT '',
    color          TEXT NOT NULL DEFAULT '',
    muted_until    INTEGER,
    folder_id      TEXT REFERENCES folders(id) ON DELETE SET NULL,
    webhook_token  TEXT NOT NULL UNIQUE,
    webhook_secret TEXT NOT NULL,
    approval       TEXT,             -- JSON approval rule, NULL: none
    created_at     INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL
);
CREATE INDEX channels_user ON channels(user_id, created_at);
CREATE INDEX channels_folder ON channels(folder_id);

CREATE TABLE pins (
    user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    channel_id TEXT NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
    position   INTEGER NOT NULL,
    PRIMARY KEY (user_id, channel_id)
);
CREATE INDEX pins_channel ON pins(channel_id);

CREATE TABLE devices (
    id         TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    platform   TEXT NOT NULL,
    name       TEXT NOT NULL DEFAULT '',
    push_token TEXT NOT NULL,
    active     INTEGER NOT NULL DEFAULT 1,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE INDEX devices_user ON devices(user_id);
