-- Notifications that a browser answers, and that follow their message.
--
-- A web device remembers the browser session that registered it: an answer
-- from one of its notifications must come from that same session, so that
-- signing out (or a revoked session) ends the device's power to answer. The
-- session's deletion clears the link.
ALTER TABLE devices ADD COLUMN session_id TEXT REFERENCES sessions(id) ON DELETE SET NULL;

-- A push job is either a message's notification ('message') or, once the
-- message is answered or its approval resolved, the update that replaces the
-- notification on the recipients' browsers ('update').
ALTER TABLE push_jobs ADD COLUMN kind TEXT NOT NULL DEFAULT 'message';

-- Deleting a session looks up its devices.
CREATE INDEX devices_session ON devices(session_id);
