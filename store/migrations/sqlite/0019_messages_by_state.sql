-- Lists filtered by state (GET /v1/messages?state=...) walk a channel's
-- messages of one state newest first: without this index that walk read
-- every message of the channel to find the few in a rare state. SQLite
-- keeps the rowid in each entry, so the walk is in rowid order.
CREATE INDEX messages_channel_state ON messages(channel_id, state);
