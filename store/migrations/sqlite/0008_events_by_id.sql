-- A stream reads the events after its last id, a handful of rows at the
-- newest end of the table: walking them by id and skipping other users'
-- rows costs less than an index entry on every send (measured, about 4% of
-- send throughput). Deleting a user's events scans the table, which is rare.
DROP INDEX events_user;
