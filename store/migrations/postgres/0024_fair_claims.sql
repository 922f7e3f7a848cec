-- Fair claims: no user's jobs may hold more than a share of the workers (as
-- SQLite's 0024). A retry of a push to one device names the user it is for
-- (owner_id), the device's; a message's fan-out and its update leave it
-- empty, their owner being the channel's, which the claim looks up.
ALTER TABLE push_jobs ADD COLUMN owner_id TEXT NOT NULL DEFAULT '';
UPDATE push_jobs SET owner_id = (SELECT d.user_id FROM devices d WHERE d.id = push_jobs.device_id)
    WHERE device_id IS NOT NULL;

-- The jobs in flight, counted by every claim; only claimed rows are in them.
CREATE INDEX push_jobs_leased ON push_jobs(lease_until) WHERE lease_until IS NOT NULL;
CREATE INDEX deliveries_leased ON deliveries(lease_until) WHERE lease_until IS NOT NULL;

-- A device is registered by its push token, which one phone or browser
-- holds: finding the registrations of a token no longer reads every
-- device, however many a user has. A hash index: a token may be longer
-- than a B-tree entry may (4 KB).
CREATE INDEX devices_push_token ON devices USING hash (push_token);
