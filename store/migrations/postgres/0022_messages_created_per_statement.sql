-- The send path's trigger runs once a statement rather than once a row.
--
-- The writer inserts the sends it gathers with one statement (pgrows.go).
-- A row-level trigger ran its three statements again for every message:
-- about half the cost of inserting a message. This one runs each once for
-- all the statement's messages, which it reads from the transition table
-- created.
--
-- What it records is the same as messages_created_fn's, in the same order:
-- each message's events in the order of the messages (their rowid), the
-- channel's owner first, then the approvers other than the owner in the
-- order their rule lists them; and its push job, unless muted, when it has
-- approvers or the owner has an active device.
DROP TRIGGER messages_created ON messages;
DROP FUNCTION messages_created_fn();

-- The owner is looked up a message at a time, through the channel's key:
-- joined to the transition table, which has no statistics, the channels
-- could be read whole.
CREATE FUNCTION messages_created_fn() RETURNS trigger
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
    INSERT INTO push_jobs (message_id, next_attempt_at)
        SELECT n.id, n.created_at FROM created n
            WHERE n.muted = 0 AND (n.approval IS NOT NULL OR EXISTS (
                SELECT 1 FROM devices d
                WHERE d.active = 1 AND d.user_id = (SELECT user_id FROM channels WHERE id = n.channel_id)))
            ORDER BY n.rowid;
    RETURN NULL;
END
$$;
CREATE TRIGGER messages_created AFTER INSERT ON messages
    REFERENCING NEW TABLE AS created
    FOR EACH STATEMENT EXECUTE FUNCTION messages_created_fn();
