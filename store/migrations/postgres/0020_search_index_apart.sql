-- SQLite's 0020 moves its search index to a database file of its own, so
-- that merging the index never holds the writer. PostgreSQL's index is an
-- ordinary table whose writes hold nothing of the sort: no change here.
SELECT 1;
