package server

import "net/http"

// PLACEHOLDER until the ntfy publish path lands (h-ntfypub replaces this file).

func (s *Server) handleNtfyPublishJSON(w http.ResponseWriter, r *http.Request) {
	s.writeError(w, r, errNotFound("ntfy publishing is not available"))
}

func (s *Server) handleNtfyPublish(w http.ResponseWriter, r *http.Request, topic, sequenceID string) {
	s.writeError(w, r, errNotFound("ntfy publishing is not available"))
}
