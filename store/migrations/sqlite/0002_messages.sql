-- Messages and their polling state.
CREATE TABLE messages (
    id           TEXT PRIMARY KEY,
    channel_id   TEXT NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
    title        TEXT NOT NULL,
    body         TEXT NOT NULL DEFAULT '',
    priority     TEXT NOT NULL DEFAULT 'normal',
    actions      TEXT NOT NULL DEFAULT '[]',  -- JSON array of actions as sent
    callback_url TEXT,
    muted        INTEGER NOT NULL DEFAULT 0,
    approval     TEXT,                        -- JSON copy of the channel's rule when sent
    -- Polling state: pending, submitted, already_read, expired, failed.
    state        TEXT NOT NULL DEFAULT 'pending',
    response     TEXT,                        -- JSON callback result; cleared once read or expired
    submitted_at INTEGER,
    created_at   INTEGER NOT NULL
);
-- Lists are newest first in commit order (rowid), which this index holds:
-- an index entry carries the rowid. Retention walks rowids too (ids grow
-- with time), so created_at needs no index: one index less per send.
CREATE INDEX messages_channel ON messages(channel_id);
CREATE INDEX messages_submitted ON messages(submitted_at) WHERE state = 'submitted';
