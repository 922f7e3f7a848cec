package server

import (
	"context"
	"errors"
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/heraldhq/herald/service"
	"github.com/heraldhq/herald/store"
)

// handlePoll is GET /v1/callback/{token}/{message_id}: the sender reads the
// answer once, with nothing but the webhook token.
func (s *Server) handlePoll(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	ctx := r.Context()
	ch, err := s.senderChannel(ctx, p.ByName("token"))
	if err != nil {
		return err
	}
	poll, err := s.svc.Poll(ctx, ch, p.ByName("message_id"))
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	out := map[string]any{"status": poll.State}
	switch {
	case poll.Unanswerable:
		// Nothing can answer it: say so, so that a waiting sender stops.
		out["answerable"] = false
	case poll.State == store.StateSubmitted:
		out["submitted_at"], out["result"] = ts(poll.SubmittedAt), poll.Result
		if a := poll.Approval; a != nil {
			out["approval_status"], out["approval"] = a.Status, a.Tally
		}
	}
	if poll.Alert != nil {
		out["alert"] = service.RenderAlert(poll.Alert)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// senderChannel is the channel of a webhook token, for what a sender does
// with nothing but the token besides sending: poll, cancel an alert.
func (s *Server) senderChannel(ctx context.Context, token string) (*store.Channel, error) {
	ch, _, err := s.st.ChannelByToken(ctx, token)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errInvalidToken("no channel has this webhook token")
	}
	return ch, err
}
