-- PostgreSQL's 0021 changes its shared rate limits' table, which SQLite
-- does not have (its limits live in the server's memory): no change here,
-- so that both databases' versions stay equal.
SELECT 1;
