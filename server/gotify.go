package server

import "net/http"

// PLACEHOLDER until the Gotify publish path lands (h-ntfypub replaces this file).

func (s *Server) handleGotifyMessage(w http.ResponseWriter, r *http.Request) {
	s.writeError(w, r, errNotFound("gotify publishing is not available"))
}

func (s *Server) handleGotifyVersion(w http.ResponseWriter, r *http.Request) {
	s.writeError(w, r, errNotFound("gotify publishing is not available"))
}
