-- Files and pictures sent with a message, kept in the database beside it:
-- one write stores both, a backup holds both, and deleting the message
-- (itself, its channel, its user, or the retention sweep) deletes its
-- attachment through the foreign key. A message has at most one.
--
-- user_id is the channel owner's, whose quota the file counts against;
-- attachments_user carries size so that summing a user's bytes reads the
-- index alone. content_type is what Herald sniffed, never what the sender
-- claimed. thumbnail is a JPEG of a large picture, NULL for anything else;
-- width and height are set for pictures only. The message's extras JSON
-- holds the same metadata, so that listing messages needs no join and a
-- message without an attachment stores nothing more.
CREATE TABLE attachments (
    id           TEXT PRIMARY KEY,
    message_id   TEXT NOT NULL UNIQUE REFERENCES messages(id) ON DELETE CASCADE,
    user_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    content_type TEXT NOT NULL,
    size         INTEGER NOT NULL,
    data         BLOB NOT NULL,
    thumbnail    BLOB,
    width        INTEGER,
    height       INTEGER,
    created_at   INTEGER NOT NULL
);
CREATE INDEX attachments_user ON attachments(user_id, size);
