-- Lists filtered by state walk a channel's messages of one state newest
-- first (SQLite's 0019). PostgreSQL's index names the position (rowid)
-- itself, to walk in its order.
CREATE INDEX messages_channel_state ON messages(channel_id, state, rowid);
