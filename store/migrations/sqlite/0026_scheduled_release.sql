-- Scheduled, ephemeral and no-push messages (the columns of 0025) take
-- effect.
--
-- A message with deliver_at is stored at once but streamed and pushed only
-- when it is due: the send trigger skips it, and the release sweep
-- (ReleaseScheduled) sets deliver_at to NULL when it is due, which fires
-- messages_released: the same events and push job the send trigger would
-- have made, dated when the message was due. "UPDATE OF deliver_at": no
-- other update of a message runs it. A no_push message gets no push job.
DROP TRIGGER messages_created;
CREATE TRIGGER messages_created AFTER INSERT ON messages WHEN NEW.deliver_at IS NULL
BEGIN
    INSERT INTO events (user_id, type, message_id, channel_id, created_at)
        SELECT c.user_id, 'message.created', NEW.id, NEW.channel_id, NEW.created_at
            FROM channels c WHERE c.id = NEW.channel_id;
    INSERT INTO events (user_id, type, message_id, channel_id, created_at)
        SELECT a.user_id, 'message.created', NEW.id, NEW.channel_id, NEW.created_at
            FROM json_each(NEW.approval, '$.approvers') j
            JOIN channel_approvers a ON a.channel_id = NEW.channel_id AND a.entry = j.value
            WHERE NEW.approval IS NOT NULL AND a.state = 'accepted'
              AND a.user_id != (SELECT user_id FROM channels WHERE id = NEW.channel_id)
            GROUP BY a.user_id ORDER BY min(j.key);
    INSERT INTO push_jobs (message_id, next_attempt_at)
        SELECT NEW.id, NEW.created_at
        WHERE NEW.muted = 0 AND NEW.no_push = 0 AND (NEW.approval IS NOT NULL OR EXISTS (
            SELECT 1 FROM devices d
            WHERE d.active = 1 AND d.user_id = (SELECT user_id FROM channels WHERE id = NEW.channel_id)));
END;

CREATE TRIGGER messages_released AFTER UPDATE OF deliver_at ON messages
    WHEN OLD.deliver_at IS NOT NULL AND NEW.deliver_at IS NULL
BEGIN
    INSERT INTO events (user_id, type, message_id, channel_id, created_at)
        SELECT c.user_id, 'message.created', NEW.id, NEW.channel_id, OLD.deliver_at
            FROM channels c WHERE c.id = NEW.channel_id;
    INSERT INTO events (user_id, type, message_id, channel_id, created_at)
        SELECT a.user_id, 'message.created', NEW.id, NEW.channel_id, OLD.deliver_at
            FROM json_each(NEW.approval, '$.approvers') j
            JOIN channel_approvers a ON a.channel_id = NEW.channel_id AND a.entry = j.value
            WHERE NEW.approval IS NOT NULL AND a.state = 'accepted'
              AND a.user_id != (SELECT user_id FROM channels WHERE id = NEW.channel_id)
            GROUP BY a.user_id ORDER BY min(j.key);
    INSERT INTO push_jobs (message_id, next_attempt_at)
        SELECT NEW.id, OLD.deliver_at
        WHERE NEW.muted = 0 AND NEW.no_push = 0 AND (NEW.approval IS NOT NULL OR EXISTS (
            SELECT 1 FROM devices d
            WHERE d.active = 1 AND d.user_id = (SELECT user_id FROM channels WHERE id = NEW.channel_id)));
END;

-- Ephemeral messages are deleted once delivered (DeleteDeliveredEphemeral):
-- only they are in this index.
CREATE INDEX messages_ephemeral ON messages(created_at) WHERE ephemeral = 1;

-- The delivery queue also makes the requests of http actions (a button
-- that calls a URL when tapped): a message may then have its callback and
-- any number of those. kind tells them apart ('callback' or 'action');
-- method and headers (JSON) are an action's request, body its body. The
-- callback stays one per message (deliveries_callback). SQLite cannot drop
-- the UNIQUE of message_id in place: both tables are rebuilt under their
-- own names (as 0012 did for events), attempts first, so that dropping the
-- deliveries deletes no attempt through its foreign key.
CREATE TABLE deliveries_copy AS SELECT * FROM deliveries;
CREATE TABLE delivery_attempts_copy AS SELECT * FROM delivery_attempts;
DROP TABLE delivery_attempts;
DROP TABLE deliveries;
CREATE TABLE deliveries (
    id               TEXT PRIMARY KEY,
    message_id       TEXT NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    channel_id       TEXT NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
    event            TEXT NOT NULL,
    url              TEXT NOT NULL,
    body             BLOB NOT NULL,              -- the exact bytes sent (and signed, for a callback)
    state            TEXT NOT NULL DEFAULT 'pending', -- pending, delivered, failed
    attempts         INTEGER NOT NULL DEFAULT 0, -- attempts since (re)queueing
    next_attempt_at  INTEGER NOT NULL,
    lease_until      INTEGER,                    -- claimed by a worker until then
    last_status_code INTEGER,
    last_error       TEXT,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    kind             TEXT NOT NULL DEFAULT 'callback', -- callback, action
    method           TEXT,                       -- an action's method
    headers          TEXT                        -- an action's headers, a JSON object
);
INSERT INTO deliveries (id, message_id, channel_id, event, url, body, state, attempts, next_attempt_at, lease_until,
        last_status_code, last_error, created_at, updated_at)
    SELECT id, message_id, channel_id, event, url, body, state, attempts, next_attempt_at, lease_until,
        last_status_code, last_error, created_at, updated_at FROM deliveries_copy;
CREATE UNIQUE INDEX deliveries_callback ON deliveries(message_id) WHERE kind = 'callback';
CREATE INDEX deliveries_message ON deliveries(message_id);
CREATE INDEX deliveries_due ON deliveries(next_attempt_at) WHERE state = 'pending';
CREATE INDEX deliveries_leased ON deliveries(lease_until) WHERE lease_until IS NOT NULL;
CREATE TABLE delivery_attempts (
    id          INTEGER PRIMARY KEY,
    delivery_id TEXT NOT NULL REFERENCES deliveries(id) ON DELETE CASCADE,
    attempt     INTEGER NOT NULL,
    at          INTEGER NOT NULL,
    status_code INTEGER,                         -- NULL when no answer came
    error       TEXT NOT NULL DEFAULT '',
    duration_ms INTEGER NOT NULL
);
INSERT INTO delivery_attempts (id, delivery_id, attempt, at, status_code, error, duration_ms)
    SELECT id, delivery_id, attempt, at, status_code, error, duration_ms FROM delivery_attempts_copy;
CREATE INDEX delivery_attempts_delivery ON delivery_attempts(delivery_id, id);
DROP TABLE deliveries_copy;
DROP TABLE delivery_attempts_copy;

-- A stream event names the sequence of its message, so that a deletion's
-- event still says which notification to remove once the message is gone.
ALTER TABLE events ADD COLUMN sequence_id TEXT;
