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
// JSON when {source} is "template" and the channel has a template. When
// the channel has a source secret, every request must carry the platform's
// credential made with it (transform.Secrets).
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
	src := transform.Sources[source]
	m, err := transform.Transform(source, transform.Secrets{Source: ch.SourceSecret, Callback: ch.WebhookSecret}, r.Header, body)
	switch {
	case errors.Is(err, transform.ErrNoSignature):
		return errInvalidToken("the %s header is missing: this channel has a source_secret, so every %s webhook must be signed with it",
			src.SignatureHeader, source)
	case errors.Is(err, transform.ErrBadSignature) && ch.SourceSecret != "":
		return errInvalidToken("the %s is missing or does not match this channel's source_secret", src.Credential)
	case errors.Is(err, transform.ErrBadSignature):
		return errInvalidToken("the %s signature does not match; set a source_secret on this channel and sign with it",
			src.SignatureHeader)
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
