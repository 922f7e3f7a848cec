-- A send does less in SQLite (each step measured on the insert alone, CPU
-- per message, 60,000 inserts in commits of 32: 14.9 us before both).
--
-- 1. Lists of one state no longer need an index entry for every message:
-- most messages stay pending, and a list of pending messages walks the
-- channel's messages (messages_channel) and keeps the pending ones. The
-- rarer states (answered, expired, failed, already read) keep their own
-- index, which now holds only the messages that left pending, so a send
-- adds nothing to it; the state filters name "state != 'pending'" so that
-- SQLite may use it (store/messagefilter.go). 1.6 us less per message.
DROP INDEX messages_channel_state;
CREATE INDEX messages_channel_answered ON messages(channel_id, state) WHERE state != 'pending';

-- 2. The send trigger is two, one for messages with an approval rule and
-- one without, so that a plain message runs no approver statement at all.
-- Each message fires exactly one of them. The events and push job are
-- those of 0026, in the same order. 1.0 us less per message.
DROP TRIGGER messages_created;
CREATE TRIGGER messages_created AFTER INSERT ON messages
    WHEN NEW.deliver_at IS NULL AND NEW.approval IS NULL
BEGIN
    INSERT INTO events (user_id, type, message_id, channel_id, created_at)
        SELECT c.user_id, 'message.created', NEW.id, NEW.channel_id, NEW.created_at
            FROM channels c WHERE c.id = NEW.channel_id;
    INSERT INTO push_jobs (message_id, next_attempt_at)
        SELECT NEW.id, NEW.created_at
        WHERE NEW.muted = 0 AND NEW.no_push = 0 AND EXISTS (
            SELECT 1 FROM devices d
            WHERE d.active = 1 AND d.user_id = (SELECT user_id FROM channels WHERE id = NEW.channel_id));
END;

CREATE TRIGGER messages_created_approval AFTER INSERT ON messages
    WHEN NEW.deliver_at IS NULL AND NEW.approval IS NOT NULL
BEGIN
    INSERT INTO events (user_id, type, message_id, channel_id, created_at)
        SELECT c.user_id, 'message.created', NEW.id, NEW.channel_id, NEW.created_at
            FROM channels c WHERE c.id = NEW.channel_id;
    INSERT INTO events (user_id, type, message_id, channel_id, created_at)
        SELECT a.user_id, 'message.created', NEW.id, NEW.channel_id, NEW.created_at
            FROM json_each(NEW.approval, '$.approvers') j
            JOIN channel_approvers a ON a.channel_id = NEW.channel_id AND a.entry = j.value
            WHERE a.state = 'accepted'
              AND a.user_id != (SELECT user_id FROM channels WHERE id = NEW.channel_id)
            GROUP BY a.user_id ORDER BY min(j.key);
    INSERT INTO push_jobs (message_id, next_attempt_at)
        SELECT NEW.id, NEW.created_at
        WHERE NEW.muted = 0 AND NEW.no_push = 0;
END;
