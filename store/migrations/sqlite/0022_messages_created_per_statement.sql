-- PostgreSQL's 0022 turns its messages_created trigger into one that runs
-- once a statement, for the sends its writer inserts together. SQLite has
-- only row-level triggers, and inserts one send a statement: no change
-- here, so that both databases' versions stay equal.
SELECT 1;
