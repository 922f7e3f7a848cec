-- Fair claims: no user's jobs may hold more than a share of the workers.
--
-- A retry of a push to one device names the user it is for (owner_id), the
-- device's. A message's fan-out and its update leave it empty: their owner
-- is the channel's, which the claim looks up through the message, so the
-- send path writes nothing more. The claim counts each owner's jobs in
-- flight and passes over the jobs of an owner at their share, so one user's
-- dead endpoints cannot hold every worker. A callback's owner is its
-- channel's too, one key lookup away.
ALTER TABLE push_jobs ADD COLUMN owner_id TEXT NOT NULL DEFAULT '';
UPDATE push_jobs SET owner_id = (SELECT d.user_id FROM devices d WHERE d.id = push_jobs.device_id)
    WHERE device_id IS NOT NULL;

-- The jobs in flight, counted by every claim. Only claimed rows are in these
-- indexes: a job is queued without a lease, so a send costs no more.
CREATE INDEX push_jobs_leased ON push_jobs(lease_until) WHERE lease_until IS NOT NULL;
CREATE INDEX deliveries_leased ON deliveries(lease_until) WHERE lease_until IS NOT NULL;

-- A device is registered by its push token, which one phone or browser
-- holds: finding the registrations of a token no longer reads every
-- device, however many a user has.
CREATE INDEX devices_push_token ON devices(push_token);
