-- Whether a user's email address was vouched for: by the operator (users
-- made with the CLI) or by an identity provider that marked it verified.
-- Only such an address may be claimed by another identity through
-- link_by_email. Users that an OIDC sign-up created before this column
-- existed (an identity made in the same millisecond as its user, and no
-- password) may have come from an unverified address: they start
-- unverified, and become verified when their own identity next signs in
-- with the address verified.
ALTER TABLE users ADD COLUMN email_verified INTEGER NOT NULL DEFAULT 1;
UPDATE users SET email_verified = 0
WHERE password_hash IS NULL
  AND EXISTS (SELECT 1 FROM identities i WHERE i.user_id = users.id AND i.created_at = users.created_at);
