-- Integrations: what a channel checks on incoming webhooks and how it turns
-- arbitrary JSON into a message.
--
-- source_secret: the shared secret the alert and forge transformers check
-- (Gitea/Forgejo signature, GitLab token, Authorization for Alertmanager,
-- Grafana and Uptime Kuma). NULL: none; the URL's token is the credential.
-- It is kept apart from webhook_secret, which signs callbacks, so that
-- pasting it into another system does not let that system sign callbacks.
ALTER TABLE channels ADD COLUMN source_secret TEXT;

-- template: JSON {"title", "body", "priority", "url"}, each a Go
-- text/template over the incoming JSON, used by /v1/webhook/template/{token}.
-- NULL: no template.
ALTER TABLE channels ADD COLUMN template TEXT;
