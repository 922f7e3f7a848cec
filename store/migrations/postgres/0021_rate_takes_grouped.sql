-- A rate bucket's took was whether its last take got a token (0 or 1).
-- Takes are now grouped, several to a statement (store/ratebuckets.go):
-- took is how many of the last statement's takes got one.
ALTER TABLE rate_buckets DROP CONSTRAINT rate_buckets_took_check;
ALTER TABLE rate_buckets ADD CONSTRAINT rate_buckets_took_check CHECK (took >= 0);
