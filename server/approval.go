package server

import (
	"net/http"

	"github.com/heraldhq/herald/store"
)

// vote records an approver's vote on a message of an approval channel.
func (s *Server) vote(w http.ResponseWriter, r *http.Request, m *store.Message, ch *store.Channel, who *principal, req respondRequest) error {
	return newError(http.StatusNotImplemented, "not_implemented", "approval votes are not implemented yet")
}
