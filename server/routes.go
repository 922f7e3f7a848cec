package server

import "net/http"

// routes registers every endpoint in one place.
func (s *Server) routes() {
	const (
		get, post, put, patch, del = http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete
	)
	s.public(get, "/healthz", s.handleHealth)
	if s.cfg.Metrics {
		s.public(get, "/metrics", s.handleMetrics)
	}

	// Sign-in, refresh and logout share one route: httprouter cannot hold
	// /v1/auth/refresh beside /v1/auth/:idp (it panics at registration).
	s.public(post, "/v1/auth/:idp", s.handleAuthPost)
	s.authed(get, "/v1/auth/me", s.handleMe)
	s.public(get, "/auth/:idp/login", s.handleLogin)
	s.public(get, "/auth/:idp/callback", s.handleCallback)
	s.public(post, "/auth/logout", s.handleBrowserLogout)
	s.public(post, "/auth/local", s.handleBrowserLocalSignIn)
	s.public(get, "/v1/auth/providers", s.handleProviders)
	s.sessionOnly(del, "/v1/auth/user", s.handleDeleteUser)
	s.sessionOnly(get, "/v1/account", s.handleAccount)
	s.sessionOnly(post, "/v1/account/password", s.handleChangePassword)
	s.authed(get, "/v1/account/quiet-hours", s.handleGetQuietHours)
	s.authed(put, "/v1/account/quiet-hours", s.handlePutQuietHours)

	s.adminOnly(get, "/v1/admin/users", s.handleAdminListUsers)
	s.adminOnly(post, "/v1/admin/users", s.handleAdminCreateUser)
	s.adminOnly(patch, "/v1/admin/users/:id", s.handleAdminUpdateUser)
	s.adminOnly(post, "/v1/admin/users/:id/password", s.handleAdminResetPassword)
	s.adminOnly(del, "/v1/admin/users/:id", s.handleAdminDeleteUser)
	s.adminOnly(get, "/v1/admin/server", s.handleAdminServer)

	s.sessionOnly(post, "/v1/keys", s.handleCreateKey)
	s.sessionOnly(get, "/v1/keys", s.handleListKeys)
	s.sessionOnly(del, "/v1/keys/:id", s.handleRevokeKey)

	s.authed(get, "/v1/channels", s.handleListChannels)
	s.authed(post, "/v1/channels", s.handleCreateChannel)
	s.authed(get, "/v1/channels/:id", s.handleGetChannel)
	s.authed(patch, "/v1/channels/:id", s.handleUpdateChannel)
	s.authed(del, "/v1/channels/:id", s.handleDeleteChannel)
	s.authed(post, "/v1/channels/:id/regenerate", s.handleRegenerateToken)
	s.authed(get, "/v1/channels/:id/secret", s.handleGetSecret)
	s.authed(post, "/v1/channels/:id/secret/rotate", s.handleRotateSecret)
	s.authed(get, "/v1/channels/:id/approvers", s.handleChannelApprovers)
	s.authed(get, "/v1/channels/:id/escalations", s.handleChannelEscalations)
	s.authed(get, "/v1/channels/:id/qr.png", s.handleChannelQR)
	s.authed(get, "/v1/approvals/invitations", s.handleListInvitations)
	s.authed(post, "/v1/approvals/invitations/:id/accept", s.handleAcceptInvitation)
	s.authed(post, "/v1/approvals/invitations/:id/decline", s.handleDeclineInvitation)

	s.authed(get, "/v1/folders", s.handleListFolders)
	s.authed(post, "/v1/folders", s.handleCreateFolder)
	s.authed(post, "/v1/folders/reorder", s.handleReorderFolders)
	s.authed(patch, "/v1/folders/:id", s.handleRenameFolder)
	s.authed(del, "/v1/folders/:id", s.handleDeleteFolder)

	s.authed(get, "/v1/pins", s.handleListPins)
	s.authed(post, "/v1/pins", s.handlePin)
	s.authed(del, "/v1/pins", s.handleUnpin)
	s.authed(post, "/v1/pins/reorder", s.handleReorderPins)

	s.public(post, "/v1/send/:token", s.handleSend)
	s.public(get, "/v1/callback/:token/:message_id", s.handlePoll)
	s.public(post, "/v1/callback/:token/:message_id/alert/cancel", s.handleSenderCancelAlert)
	s.public(post, "/v1/webhook/:source/:token", s.handleWebhook)
	s.authed(get, "/v1/subscriptions", s.handleSubscription)
	s.authed(post, "/v1/subscriptions/:store/verify", s.handleVerifyPurchase)
	s.public(post, "/v1/subscriptions/:store/webhook", s.handleStoreWebhook)
	s.authed(get, "/v1/messages", s.handleListMessages)
	s.authed(get, "/v1/messages/:id", s.handleGetMessage)
	s.authed(del, "/v1/messages/:id", s.handleDeleteMessage)
	s.authed(post, "/v1/messages/:id/respond", s.handleRespond)
	s.authed(post, "/v1/messages/:id/alert/cancel", s.handleCancelAlert)
	s.serviceWorker(post, "/v1/messages/:id/notification-response", s.handleNotificationResponse)
	s.public(post, "/v1/ntfy/answer/:capability", s.handleNtfyAnswer)
	s.authed(get, "/v1/messages/:id/deliveries", s.handleDeliveries)
	// A signed link (?exp=&sig=) reads it without a credential: the
	// handler authenticates the others itself.
	s.public(get, "/v1/attachments/:id", s.handleAttachment)
	s.authed(post, "/v1/messages/:id/redeliver", s.handleRedeliver)

	s.public(get, "/v1/verify/docs", s.handleVerifyDocs)
	s.public(post, "/v1/verify/generate", s.handleVerifyGenerate)
	s.public(post, "/v1/verify/signature", s.handleVerifySignature)

	s.public(get, "/v1/openapi.json", s.handleOpenAPI)
	s.public(get, "/v1/push/vapid-public-key", s.handleVAPIDKey)
	s.authed(get, "/v1/stream", s.handleStream)

	s.authed(get, "/v1/devices", s.handleListDevices)
	s.authed(post, "/v1/devices", s.handleRegisterDevice)
	s.authed(patch, "/v1/devices/:id", s.handleUpdateDevice)
	s.authed(del, "/v1/devices/:id", s.handleDeleteDevice)
	s.serviceWorker(post, "/v1/devices/:id/subscription", s.handleResubscribe)
}
