-- Urgent messages: alerts that repeat until someone acknowledges them,
-- escalate to further people, and expire.
--
-- channels.urgent is the channel's urgent policy (JSON: repeat_seconds,
-- expire_seconds, escalate_after_seconds, escalation); NULL: the channel
-- refuses urgent messages.
ALTER TABLE channels ADD COLUMN urgent TEXT;

-- The escalation list of a channel's urgent policy, one invitation per
-- entry, exactly as channel_approvers holds an approval rule's: the entry
-- as typed (a user id or a lower-cased email address), answered by the
-- person it names. Nobody is alerted before they accept. Apart from the
-- approvers' table, so that consenting to approve and consenting to be
-- woken are two answers, and the send triggers (which read the
-- approvers') are untouched.
CREATE TABLE channel_escalations (
    id         TEXT PRIMARY KEY,
    channel_id TEXT NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
    position   INTEGER NOT NULL,          -- the entry's place in the list
    entry      TEXT NOT NULL,             -- a user id, or a lower-cased email address
    user_id    TEXT REFERENCES users(id) ON DELETE SET NULL,
    state      TEXT NOT NULL DEFAULT 'invited',  -- invited, accepted, declined
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (channel_id, entry)
);
CREATE INDEX channel_escalations_entry ON channel_escalations(entry);
CREATE INDEX channel_escalations_user ON channel_escalations(user_id);

CREATE TRIGGER users_escalations_reset BEFORE DELETE ON users
BEGIN
    UPDATE channel_escalations SET user_id = NULL, state = 'invited' WHERE user_id = OLD.id;
END;

-- One alert per urgent message, written with the message (from Go, only
-- for urgent sends). due_at is the earliest of next_repeat_at,
-- next_escalation_at and expire_at while the alert is active: the sweep
-- claims alerts by it, through an index of the active ones only.
CREATE TABLE alerts (
    message_id          TEXT PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
    state               TEXT NOT NULL DEFAULT 'active', -- active, acknowledged, cancelled, expired
    repeat_ms           INTEGER NOT NULL,
    expire_at           INTEGER NOT NULL,
    next_repeat_at      INTEGER NOT NULL,
    repeats             INTEGER NOT NULL DEFAULT 0,     -- repeats sent after the first push
    last_repeat_at      INTEGER,                        -- when the last repeat was queued
    level               INTEGER NOT NULL DEFAULT 0,     -- escalation levels reached
    escalate_ms         INTEGER,                        -- NULL: no escalation
    next_escalation_at  INTEGER,                        -- NULL: no further level
    last_escalation_at  INTEGER,                        -- when the last level was reached
    due_at              INTEGER NOT NULL,
    acknowledged_by     TEXT REFERENCES users(id) ON DELETE SET NULL,
    acknowledged_at     INTEGER,
    acknowledged_device TEXT,
    resolved_at         INTEGER,
    cancelled_by        TEXT,                           -- 'sender', or the user who cancelled
    created_at          INTEGER NOT NULL
);
CREATE INDEX alerts_due ON alerts(due_at) WHERE state = 'active';

-- Who an alert reached: the owner at level 0, each escalation contact at
-- the level that reached them.
CREATE TABLE alert_recipients (
    message_id TEXT NOT NULL REFERENCES alerts(message_id) ON DELETE CASCADE,
    user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    level      INTEGER NOT NULL,
    alerted_at INTEGER NOT NULL,
    PRIMARY KEY (message_id, user_id)
);
CREATE INDEX alert_recipients_user ON alert_recipients(user_id);
