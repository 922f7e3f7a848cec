-- Stream event ids must never go back: a client resumes with the last id it
-- saw (Last-Event-ID), and an id handed out again would hide every new event
-- from it. Keeping the newest row was not enough (deleting a user deletes
-- their events), so the table takes AUTOINCREMENT, whose counter
-- (sqlite_sequence) outlives every row. The table is rebuilt without a
-- rename, so the send trigger that writes into it needs no change.
CREATE TABLE events_copy AS SELECT * FROM events;
DROP TABLE events;
CREATE TABLE events (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id    TEXT NOT NULL,
    type       TEXT NOT NULL,           -- message.created, message.updated, message.deleted
    message_id TEXT NOT NULL,
    channel_id TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
INSERT INTO events (id, user_id, type, message_id, channel_id, created_at)
    SELECT id, user_id, type, message_id, channel_id, created_at FROM events_copy ORDER BY id;
DROP TABLE events_copy;
