-- Approvers by consent.
--
-- Naming someone in a channel's approval rule no longer turns their address
-- into their account: each entry of the rule (a user id or an email
-- address, as the owner typed it) is an invitation, answered by the person
-- it names. Until they accept, nothing of the channel is pushed to them,
-- put on their live stream or listed for them. A named approver may still
-- open a message by its id and vote on it; that is checked against the
-- message's own rule, not here.
--
-- user_id is the account that answered (accepted or declined); an
-- invitation nobody answered has none. Deleting that account returns the
-- invitation to 'invited' (users_approvers_reset), so that whoever gets
-- the address next is asked again.
CREATE TABLE channel_approvers (
    id         TEXT PRIMARY KEY,
    channel_id TEXT NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
    position   INTEGER NOT NULL,          -- the entry's place in the rule
    entry      TEXT NOT NULL,             -- a user id, or a lower-cased email address
    user_id    TEXT REFERENCES users(id) ON DELETE SET NULL,
    state      TEXT NOT NULL DEFAULT 'invited',  -- invited, accepted, declined
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (channel_id, entry)
);
CREATE INDEX channel_approvers_entry ON channel_approvers(entry);
CREATE INDEX channel_approvers_user ON channel_approvers(user_id);

-- The approvers of existing rules were accounts when they were named (the
-- rule held user ids): they keep approving, as accepted.
INSERT INTO channel_approvers (id, channel_id, position, entry, user_id, state, created_at, updated_at)
    SELECT 'apv_' || lower(hex(randomblob(12))), c.id, j.key, j.value, u.id,
           CASE WHEN u.id IS NULL THEN 'invited' ELSE 'accepted' END, c.updated_at, c.updated_at
    FROM channels c
    JOIN json_each(c.approval, '$.approvers') j
    LEFT JOIN users u ON u.id = j.value
    WHERE c.approval IS NOT NULL AND j.value IS NOT NULL
    ON CONFLICT DO NOTHING;

-- A message's stream events and approver list go to the approvers who
-- accepted, among those its own rule names.
DROP TRIGGER messages_created;
CREATE TRIGGER messages_created AFTER INSERT ON messages
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
        WHERE NEW.muted = 0 AND (NEW.approval IS NOT NULL OR EXISTS (
            SELECT 1 FROM devices d
            WHERE d.active = 1 AND d.user_id = (SELECT user_id FROM channels WHERE id = NEW.channel_id)));
END;

DROP TRIGGER messages_approvers;
CREATE TRIGGER messages_approvers AFTER INSERT ON messages WHEN NEW.approval IS NOT NULL
BEGIN
    INSERT OR IGNORE INTO message_approvers (user_id, channel_id, position, message_id)
        SELECT a.user_id, NEW.channel_id, NEW.rowid, NEW.id
            FROM json_each(NEW.approval, '$.approvers') j
            JOIN channel_approvers a ON a.channel_id = NEW.channel_id AND a.entry = j.value
            WHERE a.state = 'accepted';
END;

CREATE TRIGGER users_approvers_reset BEFORE DELETE ON users
BEGIN
    UPDATE channel_approvers SET user_id = NULL, state = 'invited' WHERE user_id = OLD.id;
END;
