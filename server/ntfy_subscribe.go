package server

import "net/http"

// PLACEHOLDER until the ntfy subscribe path lands (h-ntfysub replaces this file).

func (s *Server) handleNtfySubscribe(w http.ResponseWriter, r *http.Request, topics []string, format string) {
	s.writeError(w, r, errNotFound("ntfy subscribing is not available"))
}

func (s *Server) handleNtfyAuth(w http.ResponseWriter, r *http.Request, topics []string) {
	s.writeError(w, r, errNotFound("ntfy subscribing is not available"))
}
