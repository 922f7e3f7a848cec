-- Files and pictures sent with a message, kept in the database beside it
-- (SQLite's 0030 says why): every replica serves them, a backup holds
-- them, and deleting the message deletes its attachment.
CREATE TABLE attachments (
    id           TEXT PRIMARY KEY,
    message_id   TEXT NOT NULL UNIQUE REFERENCES messages(id) ON DELETE CASCADE,
    user_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    content_type TEXT NOT NULL,
    size         BIGINT NOT NULL,
    data         BYTEA NOT NULL,
    thumbnail    BYTEA,
    width        BIGINT,
    height       BIGINT,
    created_at   BIGINT NOT NULL
);
CREATE INDEX attachments_user ON attachments(user_id, size);
