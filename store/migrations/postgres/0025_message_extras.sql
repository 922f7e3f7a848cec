-- What ntfy and Gotify senders may give a message beyond its title and
-- body, and delivery that is not "now, kept, pushed" (as SQLite's 0025).
-- Flags stay BIGINT 0/1 like muted.
ALTER TABLE messages ADD COLUMN extras TEXT;
ALTER TABLE messages ADD COLUMN sequence_id TEXT;
ALTER TABLE messages ADD COLUMN deliver_at BIGINT;
ALTER TABLE messages ADD COLUMN ephemeral BIGINT NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN no_push BIGINT NOT NULL DEFAULT 0;

CREATE INDEX messages_sequence ON messages(channel_id, sequence_id) WHERE sequence_id IS NOT NULL;
CREATE INDEX messages_scheduled ON messages(deliver_at) WHERE deliver_at IS NOT NULL;
