-- The search index moves to a database file of its own.
--
-- FTS5 merges its segments inside the writes that add to it, and a merge
-- of large segments takes from tens of milliseconds to seconds. In this
-- file every such merge held the writer, so a send could wait behind one.
-- The index now lives beside this file (herald-search.db, see search.go),
-- written by its own connection: its merges hold up only the indexer.
--
-- This file keeps what the index must learn: search_deletes logs every
-- deleted message's position (its rowid) and the largest position left
-- after it. The indexer removes those messages from the index, steps its
-- mark back when the newest messages went (SQLite hands their rowids out
-- again), and then drops the rows it has applied.
DROP TRIGGER messages_unindex;
DROP TABLE messages_fts;
DROP TABLE search_indexed;

CREATE TABLE search_deletes (
    seq      INTEGER PRIMARY KEY AUTOINCREMENT,  -- never handed out twice
    position INTEGER NOT NULL,                   -- the deleted message's rowid
    last     INTEGER NOT NULL                    -- the largest rowid left after it
);

CREATE TRIGGER messages_unindex AFTER DELETE ON messages
BEGIN
    INSERT INTO search_deletes (position, last)
        VALUES (OLD.rowid, (SELECT COALESCE(MAX(rowid), 0) FROM messages));
END;
