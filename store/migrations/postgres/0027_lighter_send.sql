-- A send adds nothing to the index of answered messages: as SQLite's 0027
-- (migrations/sqlite) says, most messages stay pending, a list of pending
-- ones walks messages_channel, and the rarer states keep an index holding
-- only the messages that left pending. The state filters name
-- "state <> 'pending'" so that the planner sees the index serves them.
DROP INDEX messages_channel_state;
CREATE INDEX messages_channel_answered ON messages(channel_id, state, rowid) WHERE state <> 'pending';
