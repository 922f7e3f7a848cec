-- Approvers by consent: SQLite's 0023 (migrations/sqlite) says why. The
-- same table, the same rows for existing rules, and the send path's events
-- and approver list from the approvers who accepted.
CREATE TABLE channel_approvers (
    id         TEXT PRIMARY KEY,
    channel_id TEXT NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
    position   BIGINT NOT NULL,           -- the entry's place in the rule
    entry      TEXT NOT NULL,             -- a user id, or a lower-cased email address
    user_id    TEXT REFERENCES users(id) ON DELETE SET NULL,
    state      TEXT NOT NULL DEFAULT 'invited',  -- invited, accepted, declined
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE (channel_id, entry)
);
CREATE INDEX channel_approvers_entry ON channel_approvers(entry);
CREATE INDEX channel_approvers_user ON channel_approvers(user_id);

INSERT INTO channel_approvers (id, channel_id, position, entry, user_id, state, created_at, updated_at)
    SELECT 'apv_' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 24), c.id, j.pos - 1, j.value, u.id,
           CASE WHEN u.id IS NULL THEN 'invited' ELSE 'accepted' END, c.updated_at, c.updated_at
    FROM channels c
    CROSS JOIN LATERAL herald_approvers(c.approval) WITH ORDINALITY AS j(value, pos)
    LEFT JOIN users u ON u.id = j.value
    WHERE c.approval IS NOT NULL AND j.value IS NOT NULL
    ON CONFLICT DO NOTHING;

-- 0022's statement-level trigger, with the approvers' events for those
-- who accepted: each once, in the order the rule names them.
CREATE OR REPLACE FUNCTION messages_created_fn() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO events (user_id, type, message_id, channel_id, created_at)
        SELECT e.user_id, 'message.created', e.id, e.channel_id, e.created_at FROM (
            SELECT (SELECT user_id FROM channels WHERE id = n.channel_id) AS user_id,
                    n.id, n.channel_id, n.created_at, n.rowid, 0 AS pos
                FROM created n
            UNION ALL
            SELECT a.user_id, n.id, n.channel_id, n.created_at, n.rowid, min(j.pos)
                FROM created n
                CROSS JOIN LATERAL herald_approvers(n.approval) WITH ORDINALITY AS j(value, pos)
                JOIN channel_approvers a ON a.channel_id = n.channel_id AND a.entry = j.value
                WHERE n.approval IS NOT NULL AND a.state = 'accepted'
                  AND a.user_id <> (SELECT user_id FROM channels WHERE id = n.channel_id)
                GROUP BY a.user_id, n.id, n.channel_id, n.created_at, n.rowid
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

CREATE OR REPLACE FUNCTION messages_approvers_fn() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO message_approvers (user_id, channel_id, position, message_id)
        SELECT a.user_id, NEW.channel_id, NEW.rowid, NEW.id
            FROM herald_approvers(NEW.approval) AS j(value)
            JOIN channel_approvers a ON a.channel_id = NEW.channel_id AND a.entry = j.value
            WHERE a.state = 'accepted'
        ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;

CREATE FUNCTION users_approvers_reset_fn() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    UPDATE channel_approvers SET user_id = NULL, state = 'invited' WHERE user_id = OLD.id;
    RETURN OLD;
END
$$;
CREATE TRIGGER users_approvers_reset BEFORE DELETE ON users
    FOR EACH ROW EXECUTE FUNCTION users_approvers_reset_fn();
