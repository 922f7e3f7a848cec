-- What ntfy and Gotify senders may give a message beyond its title and
-- body, and delivery that is not "now, kept, pushed".
--
-- extras: JSON of tags, click/icon/attachment URLs, markdown and the
-- sender's own 1-5 priority; NULL when there are none, so a plain send
-- stores nothing more. sequence_id groups the messages of a channel that
-- replace one another's notification. deliver_at holds a scheduled
-- message back until then. ephemeral: delivered live, then not kept.
-- no_push: streamed, never pushed to phones.
ALTER TABLE messages ADD COLUMN extras TEXT;
ALTER TABLE messages ADD COLUMN sequence_id TEXT;
ALTER TABLE messages ADD COLUMN deliver_at INTEGER;
ALTER TABLE messages ADD COLUMN ephemeral INTEGER NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN no_push INTEGER NOT NULL DEFAULT 0;

-- Partial indexes: only the few messages that use them are in them.
CREATE INDEX messages_sequence ON messages(channel_id, sequence_id) WHERE sequence_id IS NOT NULL;
CREATE INDEX messages_scheduled ON messages(deliver_at) WHERE deliver_at IS NOT NULL;
