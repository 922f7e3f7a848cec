package server

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/heraldhq/herald/store"
)

// invitationJSON is an approval invitation as the person it names sees it.
// The owner named them, and so chose to show who they are.
type invitationJSON struct {
	ID          string    `json:"id"`
	ChannelID   string    `json:"channel_id"`
	ChannelName string    `json:"channel_name"`
	Owner       ownerJSON `json:"owner"`
	Entry       string    `json:"entry"`
	State       string    `json:"state"`
	// Role is which of the channel's lists names them: approver (the
	// approval rule) or escalation (the urgent policy's escalation list).
	Role      string `json:"role"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
}

type ownerJSON struct {
	Name  string `json:"name"`
	Email string `json:"email"`
}

func renderInvitation(in *store.Invitation) invitationJSON {
	return invitationJSON{ID: in.ID, ChannelID: in.ChannelID, ChannelName: in.Channel,
		Owner: ownerJSON{Name: in.OwnerName, Email: in.OwnerEmail}, Entry: in.Entry, State: in.State, Role: in.Role,
		CreatedAt: ts(in.CreatedAt), UpdatedAt: ts(in.UpdatedAt)}
}

// handleListInvitations is GET /v1/approvals/invitations: the approval
// invitations addressed to the caller, by id or email, newest first.
func (s *Server) handleListInvitations(w http.ResponseWriter, r *http.Request, _ httprouter.Params, who *principal) error {
	list, err := s.svc.Invitations(r.Context(), who.user)
	if err != nil {
		return err
	}
	out := make([]invitationJSON, len(list))
	for i := range list {
		out[i] = renderInvitation(&list[i])
	}
	writeJSON(w, http.StatusOK, map[string]any{"invitations": out})
	return nil
}

// handleAcceptInvitation is POST /v1/approvals/invitations/:id/accept.
func (s *Server) handleAcceptInvitation(w http.ResponseWriter, r *http.Request, p httprouter.Params, who *principal) error {
	return s.answerInvitation(w, r, p, who, true)
}

// handleDeclineInvitation is POST /v1/approvals/invitations/:id/decline.
func (s *Server) handleDeclineInvitation(w http.ResponseWriter, r *http.Request, p httprouter.Params, who *principal) error {
	return s.answerInvitation(w, r, p, who, false)
}

func (s *Server) answerInvitation(w http.ResponseWriter, r *http.Request, p httprouter.Params, who *principal, accept bool) error {
	in, err := s.svc.AnswerInvitation(r.Context(), who.user, p.ByName("id"), accept)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderInvitation(in))
	return nil
}
