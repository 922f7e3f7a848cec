package server

import "net/http"

// PLACEHOLDER until sequences land (h-ntfydata replaces this file).

func (s *Server) handleNtfyClear(w http.ResponseWriter, r *http.Request, topic, sequenceID, how string) {
	s.writeError(w, r, errNotFound("ntfy publishing is not available"))
}
