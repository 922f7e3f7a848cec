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
