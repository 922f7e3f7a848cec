-- The callback outbox: one delivery job per message (a response or an
-- approval resolution), committed with what caused it, and every attempt.
CREATE TABLE deliveries (
    id               TEXT PRIMARY KEY,
    message_id       TEXT NOT NULL UNIQUE REFERENCES messages(id) ON DELETE CASCADE,
    channel_id       TEXT NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
    event            TEXT NOT NULL,
    url              TEXT NOT NULL,
    body             BLOB NOT NULL,              -- the exact bytes sent and signed
    state            TEXT NOT NULL DEFAULT 'pending', -- pending, delivered, failed
    attempts         INTEGER NOT NULL DEFAULT 0, -- attempts since (re)queueing
    next_attempt_at  INTEGER NOT NULL,
    lease_until      INTEGER,                    -- claimed by a worker until then
    last_status_code INTEGER,
    last_error       TEXT,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL
);
CREATE INDEX deliveries_due ON deliveries(next_attempt_at) WHERE state = 'pending';

CREATE TABLE delivery_attempts (
    id          INTEGER PRIMARY KEY,
    delivery_id TEXT NOT NULL REFERENCES deliveries(id) ON DELETE CASCADE,
    attempt     INTEGER NOT NULL,
    at          INTEGER NOT NULL,
    status_code INTEGER,                         -- NULL when no answer came
    error       TEXT NOT NULL DEFAULT '',
    duration_ms INTEGER NOT NULL
);
CREATE INDEX delivery_attempts_delivery ON delivery_attempts(delivery_id, id);
