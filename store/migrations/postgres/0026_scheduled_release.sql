-- Scheduled, ephemeral and no-push messages take effect: SQLite's 0026
-- (migrations/sqlite) says why. The statement-level send trigger of 0023
-- skips scheduled messages and queues no push for no_push ones; a
-- row-level trigger on the release of a scheduled message (deliver_at set
-- to NULL by ReleaseScheduled) records what the send trigger would have.
-- Row-level because a trigger with transition tables cannot name a column
-- ("UPDATE OF"): this one runs for releases only.
CREATE OR REPLACE FUNCTION messages_created_fn() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO events (user_id, type, message_id, channel_id, created_at)
        SELECT e.user_id, 'message.created', e.id, e.channel_id, e.created_at FROM (
            SELECT (SELECT user_id FROM channels WHERE id = n.channel_id) AS user_id,
                    n.id, n.channel_id, n.created_at, n.rowid, 0 AS pos
                FROM created n
                WHERE n.deliver_at IS NULL
            UNION ALL
            SELECT a.user_id, n.id, n.channel_id, n.created_at, n.rowid, min(j.pos)
                FROM created n
                CROSS JOIN LATERAL herald_approvers(n.approval) WITH ORDINALITY AS j(value, pos)
                JOIN channel_approvers a ON a.channel_id = n.channel_id AND a.entry = j.value
                WHERE n.approval IS NOT NULL AND n.deliver_at IS NULL AND a.state = 'accepted'
                  AND a.user_id <> (SELECT user_id FROM channels WHERE id = n.channel_id)
                GROUP BY a.user_id, n.id, n.channel_id, n.created_at, n.rowid
        ) e
        ORDER BY e.rowid, e.pos;
    INSERT INTO push_jobs (message_id, next_attempt_at)
        SELECT n.id, n.created_at FROM created n
            WHERE n.muted = 0 AND n.no_push = 0 AND n.deliver_at IS NULL AND (n.approval IS NOT NULL OR EXISTS (
                SELECT 1 FROM devices d
                WHERE d.active = 1 AND d.user_id = (SELECT user_id FROM channels WHERE id = n.channel_id)))
            ORDER BY n.rowid;
    RETURN NULL;
END
$$;

CREATE FUNCTION messages_released_fn() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO events (user_id, type, message_id, channel_id, created_at)
        SELECT e.user_id, 'message.created', NEW.id, NEW.channel_id, OLD.deliver_at FROM (
            SELECT (SELECT user_id FROM channels WHERE id = NEW.channel_id) AS user_id, 0 AS pos
            UNION ALL
            SELECT a.user_id, min(j.pos)
                FROM herald_approvers(NEW.approval) WITH ORDINALITY AS j(value, pos)
                JOIN channel_approvers a ON a.channel_id = NEW.channel_id AND a.entry = j.value
                WHERE NEW.approval IS NOT NULL AND a.state = 'accepted'
                  AND a.user_id <> (SELECT user_id FROM channels WHERE id = NEW.channel_id)
                GROUP BY a.user_id
        ) e
        ORDER BY e.pos;
    INSERT INTO push_jobs (message_id, next_attempt_at)
        SELECT NEW.id, OLD.deliver_at
            WHERE NEW.muted = 0 AND NEW.no_push = 0 AND (NEW.approval IS NOT NULL OR EXISTS (
                SELECT 1 FROM devices d
                WHERE d.active = 1 AND d.user_id = (SELECT user_id FROM channels WHERE id = NEW.channel_id)));
    RETURN NULL;
END
$$;
CREATE TRIGGER messages_released AFTER UPDATE OF deliver_at ON messages
    FOR EACH ROW WHEN (OLD.deliver_at IS NOT NULL AND NEW.deliver_at IS NULL)
    EXECUTE FUNCTION messages_released_fn();

CREATE INDEX messages_ephemeral ON messages(created_at) WHERE ephemeral = 1;

-- http actions' requests go through the delivery queue beside the
-- callback (SQLite's 0026 says how): the callback stays one per message.
ALTER TABLE deliveries DROP CONSTRAINT deliveries_message_id_key;
ALTER TABLE deliveries ADD COLUMN kind TEXT NOT NULL DEFAULT 'callback';
ALTER TABLE deliveries ADD COLUMN method TEXT;
ALTER TABLE deliveries ADD COLUMN headers TEXT;
CREATE UNIQUE INDEX deliveries_callback ON deliveries(message_id) WHERE kind = 'callback';
CREATE INDEX deliveries_message ON deliveries(message_id);

-- A stream event names the sequence of its message, so that a deletion's
-- event still says which notification to remove once the message is gone.
ALTER TABLE events ADD COLUMN sequence_id TEXT;
