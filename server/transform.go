package server

import (
	"errors"
	"io"
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/heraldhq/herald/service"
	"github.com/heraldhq/herald/transform"
)

// handleWebhook is POST /v1/webhook/{source}/:token: a GitHub, Vercel or
// Netlify webhook becomes a message in the token's channel. A signature
// header, when present, must verify with the channel's webhook secret.
func (s *Server) handleWebhook(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	source := p.ByName("source")
	if _, ok := transform.Sources[source]; !ok {
		return errNotFound("no webhook transformer for %q; use github, vercel or netlify", source)
	}
	ch, err := s.sendTarget(w, r, p.ByName("token"))
	if err != nil {
		return err
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return jsonError(err)
	}
	m, err := transform.Transform(source, ch.WebhookSecret, r.Header, body)
	switch {
	case errors.Is(err, transform.ErrBadSignature):
		return errInvalidToken("the %s signature does not match this channel's webhook secret",
			transform.Sources[source].SignatureHeader)
	case err != nil:
		return errInvalidPayload("%v", err)
	case m == nil:
		writeJSON(w, http.StatusOK, map[string]bool{"ok": true, "ignored": true})
		return nil
	}
	pl := service.WebhookPayload(m)
	if err := service.CheckSend(pl); err != nil {
		return err
	}
	return s.deliverMessage(w, r, ch, pl)
}
