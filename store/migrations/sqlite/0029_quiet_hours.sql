-- A user's quiet hours: JSON {enabled, start, end, time_zone, mode}, NULL
-- until the user sets them. The push worker reads it beside each target
-- device (PushTargets); nothing on the send path does.
ALTER TABLE users ADD COLUMN quiet_hours TEXT;
