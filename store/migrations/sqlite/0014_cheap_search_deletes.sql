-- Deleting messages without stalling sends.
--
-- The search index kept a tombstone for each deleted message
-- (contentless_delete), and writing those cost about five times the rest of
-- a message's deletion: a retention sweep of a large backlog took most of
-- the writer's time. The index is now contentless without tombstones: a
-- message leaves it through FTS5's 'delete' command, given the values it
-- was indexed with, which FTS5 folds into its next segment like an insert.
--
-- Those values are the message's title, body and channel, and its readers:
-- the channel's owner and the approvers copied into the message. So a
-- message must leave while its channel still exists: a channel's messages
-- are deleted before the channel itself (which a foreign-key cascade would
-- do after), whether the channel is deleted alone or with its user.
--
-- The index is rebuilt from nothing: the search indexer starts again from
-- the first message, in the background, and search finds older messages as
-- it catches up (about 100,000 messages a second).
DROP TRIGGER messages_unindex;
DROP TABLE messages_fts;
CREATE VIRTUAL TABLE messages_fts USING fts5(
    title, body, readers, channel,
    content = '',
    tokenize = "unicode61 tokenchars '_'"
);
UPDATE search_indexed SET position = 0;

-- A message the indexer has not reached yet is not in the index, and must
-- not be deleted from it. Trigger statements run in order: the position
-- steps back (see 0013) after the message has left.
CREATE TRIGGER messages_unindex AFTER DELETE ON messages
BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, title, body, readers, channel)
        SELECT 'delete', OLD.rowid, OLD.title, OLD.body,
            c.user_id || COALESCE((SELECT ' ' || group_concat(j.value, ' ') FROM json_each(OLD.approval, '$.approvers') j), ''),
            OLD.channel_id
        FROM channels c
        WHERE c.id = OLD.channel_id AND OLD.rowid <= (SELECT position FROM search_indexed WHERE id = 1);
    UPDATE search_indexed SET position = (SELECT COALESCE(MAX(rowid), 0) FROM messages)
        WHERE position > (SELECT COALESCE(MAX(rowid), 0) FROM messages);
END;

CREATE TRIGGER channels_messages_first BEFORE DELETE ON channels
BEGIN
    DELETE FROM messages WHERE channel_id = OLD.id;
END;

-- Deleting a message looks up its push jobs; without an index that was a
-- scan of every queued job for every message deleted.
CREATE INDEX push_jobs_message ON push_jobs(message_id);
