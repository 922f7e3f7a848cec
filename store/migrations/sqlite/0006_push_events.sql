-- Push jobs: one fan-out job per unmuted message (device_id NULL), committed
-- with the message; a transient failure leaves a retry job for that device.
CREATE TABLE push_jobs (
    id              INTEGER PRIMARY KEY,
    message_id      TEXT NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    device_id       TEXT REFERENCES devices(id) ON DELETE CASCADE,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    lease_until     INTEGER
);
CREATE INDEX push_jobs_due ON push_jobs(next_attempt_at);

-- What happened to whose messages, for the live stream and its resumption
-- (Last-Event-ID). One row per user who can see the message. Ids only grow:
-- the sweep always keeps the newest row, so no AUTOINCREMENT (which costs a
-- sqlite_sequence write per insert) is needed.
CREATE TABLE events (
    id         INTEGER PRIMARY KEY,
    user_id    TEXT NOT NULL,
    type       TEXT NOT NULL,           -- message.created, message.updated, message.deleted
    message_id TEXT NOT NULL,
    channel_id TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX events_user ON events(user_id, id);
CREATE INDEX events_created ON events(created_at);
