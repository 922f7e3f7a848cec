package server

import (
	"errors"
	"io"
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/heraldhq/herald/service"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/transform"
)

// templateSource is the {source} of POST /v1/webhook/template/:token.
const templateSource = "template"

// handleWebhook is POST /v1/webhook/{source}/:token: a webhook from a
// known platform becomes a message in the token's channel, and so does any
// JSON when {source} is "template" and the channel has a template. A
// GitHub, Vercel or Netlify signature header, when present, must verify
// with the channel's webhook secret; the alert and forge sources check the
// channel's source secret when it has one.
func (s *Server) handleWebhook(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	source := p.ByName("source")
	if _, ok := transform.Sources[source]; !ok && source != templateSource {
		return errNotFound("no webhook transformer for %q; use %s or template", source, transform.Names())
	}
	ch, err := s.sendTarget(w, r, p.ByName("token"))
	if err != nil {
		return err
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return jsonError(err)
	}
	if source == templateSource {
		return s.templateWebhook(w, r, ch, body)
	}
	secret := ch.WebhookSecret
	if transform.Sources[source].SourceSecret {
		secret = ch.SourceSecret
	}
	m, err := transform.Transform(source, secret, r.Header, body)
	switch {
	case errors.Is(err, transform.ErrBadSignature) && transform.Sources[source].SourceSecret:
		return errInvalidToken("the %s is missing or does not match this channel's source_secret",
			transform.Sources[source].Credential)
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

// templateWebhook renders the channel's template over a JSON body.
func (s *Server) templateWebhook(w http.ResponseWriter, r *http.Request, ch *store.Channel, body []byte) error {
	if ch.Template == nil {
		return errInvalidPayload("this channel has no template; set one with PATCH /v1/channels/%s", ch.ID)
	}
	m, err := service.RenderTemplate(r.Context(), ch.Template, body)
	if err != nil {
		return err
	}
	pl := service.WebhookPayload(m)
	if err := service.CheckSend(pl); err != nil {
		return err
	}
	return s.deliverMessage(w, r, ch, pl)
}
