-- Fair claims: no user's jobs may hold more than a share of the workers.
--
-- A push job names the user it is for (owner_id): the channel's owner for a
-- message's fan-out and its update, the device's user for a retry to one
-- device. The claim counts each owner's jobs in flight and passes over the
-- jobs of an owner at their share, so one user's dead endpoints cannot hold
-- every worker. A callback's owner is its channel's, one key lookup away:
-- deliveries need no such column.
ALTER TABLE push_jobs ADD COLUMN owner_id TEXT NOT NULL DEFAULT '';
UPDATE push_jobs SET owner_id = COALESCE(
    (SELECT d.user_id FROM devices d WHERE d.id = push_jobs.device_id),
    (SELECT c.user_id FROM messages m JOIN channels c ON c.id = m.channel_id WHERE m.id = push_jobs.message_id),
    '');

-- The jobs in flight, counted by every claim. Only claimed rows are in these
-- indexes: a job is queued without a lease, so a send costs no more.
CREATE INDEX push_jobs_leased ON push_jobs(lease_until, owner_id) WHERE lease_until IS NOT NULL;
CREATE INDEX deliveries_leased ON deliveries(lease_until) WHERE lease_until IS NOT NULL;

-- A device is registered by its push token, which one phone or browser
-- holds: finding the registrations of a token no longer reads every
-- device, however many a user has.
CREATE INDEX devices_push_token ON devices(push_token);

-- The send path's trigger (0007), its push job now with its owner, whom
-- the trigger looks up anyway.
DROP TRIGGER messages_created;
CREATE TRIGGER messages_created AFTER INSERT ON messages
BEGIN
    INSERT INTO events (user_id, type, message_id, channel_id, created_at)
        SELECT c.user_id, 'message.created', NEW.id, NEW.channel_id, NEW.created_at
            FROM channels c WHERE c.id = NEW.channel_id;
    INSERT INTO events (user_id, type, message_id, channel_id, created_at)
        SELECT j.value, 'message.created', NEW.id, NEW.channel_id, NEW.created_at
            FROM json_each(NEW.approval, '$.approvers') j
            WHERE NEW.approval IS NOT NULL
              AND j.value != (SELECT user_id FROM channels WHERE id = NEW.channel_id);
    INSERT INTO push_jobs (message_id, next_attempt_at, owner_id)
        SELECT NEW.id, NEW.created_at, o.user_id
        FROM (SELECT user_id FROM channels WHERE id = NEW.channel_id) o
        WHERE NEW.muted = 0 AND (NEW.approval IS NOT NULL OR EXISTS (
            SELECT 1 FROM devices d WHERE d.active = 1 AND d.user_id = o.user_id));
END;
