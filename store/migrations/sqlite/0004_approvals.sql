-- Multi-signature approval: the votes on a message, and its resolution.
ALTER TABLE messages ADD COLUMN approval_status TEXT;      -- NULL while open: approved, rejected, expired
ALTER TABLE messages ADD COLUMN approval_deadline INTEGER; -- created_at + window, persisted
CREATE INDEX messages_approval_open ON messages(approval_deadline)
    WHERE approval_deadline IS NOT NULL AND approval_status IS NULL;

CREATE TABLE votes (
    seq           INTEGER PRIMARY KEY,                -- order of arrival
    message_id    TEXT NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    user_id       TEXT NOT NULL,                      -- kept if the user is deleted later
    user_name     TEXT NOT NULL,
    action        TEXT NOT NULL,                      -- approve, reject
    response_data TEXT NOT NULL DEFAULT '{}',
    responded_at  INTEGER NOT NULL,
    UNIQUE (message_id, user_id)
);
