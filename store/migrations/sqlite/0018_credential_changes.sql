-- A live stream must end once its credential stops working. Checking the
-- credential on every event would cost a read per stream per event; instead
-- every change that can end a credential counts here, in the database, so
-- that the one reader of the event log sees changes made by any process
-- (the CLI, another replica) and streams re-check only after one.
CREATE TABLE credential_changes (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    n  INTEGER NOT NULL
);
INSERT INTO credential_changes (id, n) VALUES (1, 0);

CREATE TRIGGER credential_changes_session_deleted AFTER DELETE ON sessions
BEGIN
    UPDATE credential_changes SET n = n + 1 WHERE id = 1;
END;

-- Refreshing a session replaces its access token: the old one stops working.
CREATE TRIGGER credential_changes_session_rotated AFTER UPDATE OF access_hash ON sessions
BEGIN
    UPDATE credential_changes SET n = n + 1 WHERE id = 1;
END;

CREATE TRIGGER credential_changes_key_revoked AFTER UPDATE OF revoked_at ON api_keys
BEGIN
    UPDATE credential_changes SET n = n + 1 WHERE id = 1;
END;

CREATE TRIGGER credential_changes_key_deleted AFTER DELETE ON api_keys
BEGIN
    UPDATE credential_changes SET n = n + 1 WHERE id = 1;
END;

CREATE TRIGGER credential_changes_user_deleted AFTER DELETE ON users
BEGIN
    UPDATE credential_changes SET n = n + 1 WHERE id = 1;
END;
