-- Urgent messages: alerts that repeat until someone acknowledges them,
-- escalate to further people, and expire (SQLite's 0028 says more).
ALTER TABLE channels ADD COLUMN urgent TEXT;

CREATE TABLE channel_escalations (
    id         TEXT PRIMARY KEY,
    channel_id TEXT NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
    position   BIGINT NOT NULL,
    entry      TEXT NOT NULL,
    user_id    TEXT REFERENCES users(id) ON DELETE SET NULL,
    state      TEXT NOT NULL DEFAULT 'invited',
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE (channel_id, entry)
);
CREATE INDEX channel_escalations_entry ON channel_escalations(entry);
CREATE INDEX channel_escalations_user ON channel_escalations(user_id);

CREATE FUNCTION users_escalations_reset_fn() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    UPDATE channel_escalations SET user_id = NULL, state = 'invited' WHERE user_id = OLD.id;
    RETURN OLD;
END
$$;
CREATE TRIGGER users_escalations_reset BEFORE DELETE ON users
    FOR EACH ROW EXECUTE FUNCTION users_escalations_reset_fn();

CREATE TABLE alerts (
    message_id          TEXT PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
    state               TEXT NOT NULL DEFAULT 'active',
    repeat_ms           BIGINT NOT NULL,
    expire_at           BIGINT NOT NULL,
    next_repeat_at      BIGINT NOT NULL,
    repeats             BIGINT NOT NULL DEFAULT 0,
    last_repeat_at      BIGINT,
    level               BIGINT NOT NULL DEFAULT 0,
    escalate_ms         BIGINT,
    next_escalation_at  BIGINT,
    last_escalation_at  BIGINT,
    due_at              BIGINT NOT NULL,
    acknowledged_by     TEXT REFERENCES users(id) ON DELETE SET NULL,
    acknowledged_at     BIGINT,
    acknowledged_device TEXT,
    resolved_at         BIGINT,
    cancelled_by        TEXT,
    created_at          BIGINT NOT NULL
);
CREATE INDEX alerts_due ON alerts(due_at) WHERE state = 'active';

CREATE TABLE alert_recipients (
    message_id TEXT NOT NULL REFERENCES alerts(message_id) ON DELETE CASCADE,
    user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    level      BIGINT NOT NULL,
    alerted_at BIGINT NOT NULL,
    PRIMARY KEY (message_id, user_id)
);
CREATE INDEX alert_recipients_user ON alert_recipients(user_id);
