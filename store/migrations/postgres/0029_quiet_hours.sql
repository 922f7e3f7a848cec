-- A user's quiet hours (as SQLite's 0029): JSON text, NULL until set.
ALTER TABLE users ADD COLUMN quiet_hours TEXT;
