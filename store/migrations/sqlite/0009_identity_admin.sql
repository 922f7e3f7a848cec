-- Whether this identity's admin claim is what made its user an admin: such
-- an admin flag is withdrawn when a later sign-in no longer carries the claim.
-- Admins made any other way (the CLI, an earlier version) are never touched.
ALTER TABLE identities ADD COLUMN grants_admin INTEGER NOT NULL DEFAULT 0;
