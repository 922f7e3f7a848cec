package server

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/heraldhq/herald/store"
)

// handlePoll is GET /v1/callback/{token}/{message_id}: the sender reads the
// answer once, with nothing but the webhook token.
func (s *Server) handlePoll(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	ctx := r.Context()
	ch, _, err := s.st.ChannelByToken(ctx, p.ByName("token"))
	if errors.Is(err, store.ErrNotFound) {
		return errInvalidToken("no channel has this webhook token")
	}
	if err != nil {
		return err
	}
	poll, err := s.st.ReadResponse(ctx, ch.ID, p.ByName("message_id"), s.expireBefore())
	if errors.Is(err, store.ErrNotFound) {
		return errNotFound("no message %q in this channel", p.ByName("message_id"))
	}
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	if poll.State != store.StateSubmitted {
		writeJSON(w, http.StatusOK, map[string]string{"status": poll.State})
		return nil
	}
	out := map[string]any{"status": poll.State, "submitted_at": ts(poll.SubmittedAt)}
	var stored map[string]json.RawMessage
	if err := json.Unmarshal(poll.Response, &stored); err != nil {
		return err
	}
	// The stored response holds the callback result under "result" and, on
	// approval channels, the approval summary beside it; a plain response
	// is the callback result itself.
	if res, ok := stored["result"]; ok {
		for k, v := range stored {
			out[k] = v
		}
		out["result"] = res
	} else {
		out["result"] = json.RawMessage(poll.Response)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
