-- App-store subscriptions. One row per purchase, keyed by the store's own
-- id for it (Apple's originalTransactionId, Google's purchase token), which
-- stays the same across renewals. A purchase belongs to one user. A user's
-- plan is pro while one of their subscriptions is active and unexpired.
CREATE TABLE subscriptions (
    store       TEXT NOT NULL,               -- apple, google
    original_id TEXT NOT NULL,
    user_id     TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    product_id  TEXT NOT NULL,
    status      TEXT NOT NULL,               -- active, expired
    expires_at  INTEGER,                     -- unix ms; NULL: no end date
    updated_at  INTEGER NOT NULL,
    PRIMARY KEY (store, original_id)
);
CREATE INDEX subscriptions_user ON subscriptions(user_id);
CREATE INDEX subscriptions_active ON subscriptions(expires_at) WHERE status = 'active';
