-- Lists that cost one page, and search.
--
-- An approver's view of a channel: the messages whose own rule names them.
-- Filled by a trigger that runs for approval messages only, so a plain send
-- pays nothing; read backwards by position (the message's rowid) for
-- keyset paging.
CREATE TABLE message_approvers (
    user_id    TEXT NOT NULL,
    channel_id TEXT NOT NULL,
    position   INTEGER NOT NULL,  -- the message's rowid
    message_id TEXT NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    PRIMARY KEY (user_id, channel_id, position)
) WITHOUT ROWID;
CREATE INDEX message_approvers_message ON message_approvers(message_id);

INSERT INTO message_approvers (user_id, channel_id, position, message_id)
    SELECT DISTINCT j.value, m.channel_id, m.rowid, m.id
    FROM messages m, json_each(m.approval, '$.approvers') j
    WHERE m.approval IS NOT NULL;

CREATE TRIGGER messages_approvers AFTER INSERT ON messages WHEN NEW.approval IS NOT NULL
BEGIN
    INSERT OR IGNORE INTO message_approvers (user_id, channel_id, position, message_id)
        SELECT j.value, NEW.channel_id, NEW.rowid, NEW.id FROM json_each(NEW.approval, '$.approvers') j;
END;

-- Full-text search over titles and bodies. Contentless (the text stays in
-- messages only), with the ids of the users who may read each message
-- (owner and approvers) and its channel as columns, so that a search is
-- one index lookup. Messages are added by a background indexer in batches
-- (search_indexed holds how far it got), which keeps the send path free of
-- tokenizing; deleting a message removes its entry at once. Searches are
-- for whole words, which the index finds lazily however common they are; a
-- word's start (backu*) must gather every word it starts, so it is allowed
-- from 3 characters, and costs what its matches cost. Prefix indexes would
-- make that cheaper, but add 70% to the indexing of every message.
CREATE VIRTUAL TABLE messages_fts USING fts5(
    title, body, readers, channel,
    content = '', contentless_delete = 1,
    tokenize = "unicode61 tokenchars '_'"
);
CREATE TABLE search_indexed (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    position INTEGER NOT NULL     -- every message up to this rowid is indexed
);
INSERT INTO search_indexed (id, position) VALUES (1, 0);

-- SQLite hands out the largest rowid again once its message is deleted, so
-- the indexer's mark steps back with it: the next message there is new.
CREATE TRIGGER messages_unindex AFTER DELETE ON messages
BEGIN
    DELETE FROM messages_fts WHERE rowid = OLD.rowid;
    UPDATE search_indexed SET position = (SELECT COALESCE(MAX(rowid), 0) FROM messages)
        WHERE position > (SELECT COALESCE(MAX(rowid), 0) FROM messages);
END;
