-- Server-wide secrets generated on first start (cookie signing key, VAPID keys).
CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value BLOB NOT NULL
);
