package server

import (
	"bytes"
	"errors"
	"net/http"
	"strconv"

	"github.com/julienschmidt/httprouter"

	"github.com/heraldhq/herald/service"
	"github.com/heraldhq/herald/store"
)

// sendTarget resolves a webhook token to its channel and takes a token of
// the channel's send bucket.
func (s *Server) sendTarget(w http.ResponseWriter, r *http.Request, token string) (*store.Channel, error) {
	ch, plan, err := s.st.ChannelByToken(r.Context(), token)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errInvalidToken("no channel has this webhook token")
	}
	if err != nil {
		return nil, err
	}
	if err := s.rateLimit(w, r, "send|"+ch.ID, s.cfg.Plans.Limits(plan).SendPerMinute); err != nil {
		return nil, err
	}
	return ch, nil
}

// handleSend is POST /v1/send/{token}: the whole path a script's curl takes.
// It answers 200 only after the message is committed.
func (s *Server) handleSend(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	ch, err := s.sendTarget(w, r, p.ByName("token"))
	if err != nil {
		return err
	}
	if isMultipart(r) {
		return s.sendMultipart(w, r, ch)
	}
	body, err := readBody(r)
	if err != nil {
		return bodyError(err)
	}
	pl, err := parseSend(body)
	if err != nil {
		return s.ntfyHint(r, p.ByName("token"), body, err)
	}
	return s.deliverMessage(w, r, ch, pl)
}

// ntfyHint adds to a refused send that looks like an ntfy publish (a
// Title header, or a plain text body, as `curl -d "Backup done"` sends)
// where the same channel takes it as ntfy does: Herald reads the title
// from the JSON body only, and its ntfy door at <base_url>/<token> reads
// headers and text.
func (s *Server) ntfyHint(r *http.Request, token string, body []byte, err error) error {
	ae, ok := asAPIError(err)
	if !ok || ae.status != http.StatusBadRequest {
		return err
	}
	door := s.baseURL + "/" + token
	for _, h := range []string{"Title", "X-Title"} {
		if r.Header.Get(h) != "" {
			return newError(ae.status, ae.code, "%s (a %s header is not read: put the title in the JSON body, "+
				"or publish ntfy-style to %s, which reads headers and a text body)", ae.message, h, door)
		}
	}
	if ae.code == "invalid_json" && len(bytes.TrimSpace(body)) > 0 && describeBody(bytes.TrimSpace(body)) == "plain text" {
		return newError(ae.status, ae.code, "%s; to send plain text as the message, as ntfy does, POST it to %s", ae.message, door)
	}
	return err
}

// sendExample is the smallest send, quoted when a body is not one.
const sendExample = `{"title":"Backup done"}`

// parseSend decodes a send payload strictly and validates it.
func parseSend(body []byte) (*service.SendPayload, error) {
	var p service.SendPayload
	if !decodeSendQuick(body, &p) {
		if err := decodeExample(body, &p, sendExample); err != nil {
			return nil, err
		}
	}
	if err := service.CheckSend(&p); err != nil {
		return nil, err
	}
	return &p, nil
}

// sendResult is the answer to a send.
type sendResult struct {
	OK    bool   `json:"ok"`
	ID    string `json:"id"`
	Muted bool   `json:"muted"`
}

// appendJSON encodes r as encoding/json would (a test holds it to that),
// without reflection: this is the answer to every send.
func (r sendResult) appendJSON(b []byte) []byte {
	b = append(b, `{"ok":`...)
	b = strconv.AppendBool(b, r.OK)
	b = append(b, `,"id":`...)
	b = strconv.AppendQuote(b, r.ID) // ids are [A-Za-z0-9_]: no escaping differs
	b = append(b, `,"muted":`...)
	b = strconv.AppendBool(b, r.Muted)
	return append(b, "}\n"...)
}

// deliverMessage stores a validated message in ch (push job and stream
// event with it) and answers {ok, id, muted}.
func (s *Server) deliverMessage(w http.ResponseWriter, r *http.Request, ch *store.Channel, pl *service.SendPayload) error {
	m, err := s.svc.Send(r.Context(), ch, pl)
	if errors.Is(err, store.ErrNotFound) {
		return errInvalidToken("no channel has this webhook token") // deleted meanwhile
	} else if err != nil {
		return err
	}
	writeRawJSON(w, http.StatusOK, sendResult{OK: true, ID: m.ID, Muted: m.Muted}.appendJSON(make([]byte, 0, 64)))
	return nil
}
