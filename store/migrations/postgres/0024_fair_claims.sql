-- Fair claims: no user's jobs may hold more than a share of the workers
-- (as SQLite's 0024). A push job names the user it is for (owner_id): the
-- channel's owner for a message's fan-out and its update, the device's user
-- for a retry to one device. A callback's owner is its channel's.
ALTER TABLE push_jobs ADD COLUMN owner_id TEXT NOT NULL DEFAULT '';
UPDATE push_jobs SET owner_id = COALESCE(
    (SELECT d.user_id FROM devices d WHERE d.id = push_jobs.device_id),
    (SELECT c.user_id FROM messages m JOIN channels c ON c.id = m.channel_id WHERE m.id = push_jobs.message_id),
    '');

-- The jobs in flight, counted by every claim; only claimed rows are in them.
CREATE INDEX push_jobs_leased ON push_jobs(lease_until, owner_id) WHERE lease_until IS NOT NULL;
CREATE INDEX deliveries_leased ON deliveries(lease_until) WHERE lease_until IS NOT NULL;

-- A device is registered by its push token, which one phone or browser
-- holds: finding the registrations of a token no longer reads every
-- device, however many a user has. A hash index: a token may be longer
-- than a B-tree entry may (4 KB).
CREATE INDEX devices_push_token ON devices USING hash (push_token);

-- The send path's trigger (0022), its push jobs now with their owner, whom
-- it looks up anyway.
CREATE OR REPLACE FUNCTION messages_created_fn() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO events (user_id, type, message_id, channel_id, created_at)
        SELECT e.user_id, 'message.created', e.id, e.channel_id, e.created_at FROM (
            SELECT (SELECT user_id FROM channels WHERE id = n.channel_id) AS user_id,
                    n.id, n.channel_id, n.created_at, n.rowid, 0 AS pos
                FROM created n
            UNION ALL
            SELECT j.value, n.id, n.channel_id, n.created_at, n.rowid, j.pos
                FROM created n
                CROSS JOIN LATERAL herald_approvers(n.approval) WITH ORDINALITY AS j(value, pos)
                WHERE n.approval IS NOT NULL
                  AND j.value <> (SELECT user_id FROM channels WHERE id = n.channel_id)
        ) e
        ORDER BY e.rowid, e.pos;
    INSERT INTO push_jobs (message_id, next_attempt_at, owner_id)
        SELECT n.id, n.created_at, o.user_id FROM created n
            CROSS JOIN LATERAL (SELECT user_id FROM channels WHERE id = n.channel_id) o
            WHERE n.muted = 0 AND (n.approval IS NOT NULL OR EXISTS (
                SELECT 1 FROM devices d WHERE d.active = 1 AND d.user_id = o.user_id))
            ORDER BY n.rowid;
    RETURN NULL;
END
$$;
