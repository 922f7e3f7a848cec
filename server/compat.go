package server

import (
	"net/http"
	"strings"

	"github.com/heraldhq/herald/ntfy"
)

// The ntfy and Gotify front doors live on Herald's base URL, beside the web
// app, because their clients know only a host: ntfy's topic is a channel's
// webhook token (/<token>, /<token>/json, ...) and Gotify posts to
// /message. httprouter cannot hold /:token beside Herald's own routes, so
// requests that no route took come here first (the router's NotFound), and
// what is not ntfy's or Gotify's goes on to the web app.

// ntfyFormats are the subscribe endpoints of a topic, by their last segment.
var ntfyFormats = map[string]bool{"json": true, "sse": true, "raw": true, "ws": true}

// ntfyPublishVerbs are the GET-able publish endpoints of a topic.
var ntfyPublishVerbs = map[string]bool{"publish": true, "send": true, "trigger": true}

// serveCompat answers r when it is an ntfy or Gotify request, and reports
// whether it did.
func (s *Server) serveCompat(w http.ResponseWriter, r *http.Request) bool {
	path := r.URL.Path
	switch {
	case path == "/message" && r.Method == http.MethodPost:
		s.handleGotifyMessage(w, r)
		return true
	case path == "/version" && r.Method == http.MethodGet:
		s.handleGotifyVersion(w, r)
		return true
	case path == "/" && (r.Method == http.MethodPut || r.Method == http.MethodPost):
		s.handleNtfyPublishJSON(w, r)
		return true
	}
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	// Herald's own API is never a topic: an unknown /v1/... route answers
	// in Herald's words.
	if len(segs) > 3 || segs[0] == "v1" || !ntfyTopics(segs[0]) {
		return false
	}
	write := r.Method == http.MethodPut || r.Method == http.MethodPost
	switch len(segs) {
	case 1:
		if write {
			s.handleNtfyPublish(w, r, segs[0], "")
			return true
		}
	case 2:
		switch last := segs[1]; {
		case ntfyFormats[last] && r.Method == http.MethodGet:
			s.handleNtfySubscribe(w, r, strings.Split(segs[0], ","), last)
			return true
		case last == "auth" && r.Method == http.MethodGet:
			s.handleNtfyAuth(w, r, strings.Split(segs[0], ","))
			return true
		case ntfyPublishVerbs[last] && (write || r.Method == http.MethodGet):
			s.handleNtfyPublish(w, r, segs[0], "")
			return true
		case write && ntfy.ValidID(last):
			s.handleNtfyPublish(w, r, segs[0], last)
			return true
		case r.Method == http.MethodDelete && ntfy.ValidID(last):
			s.handleNtfyClear(w, r, segs[0], last, "delete")
			return true
		}
	case 3:
		// PUT /<topic>/<sequence id>/clear (or /read) marks the
		// notification read and clears it, as ntfy does.
		if write && ntfy.ValidID(segs[1]) && (segs[2] == "clear" || segs[2] == "read") {
			s.handleNtfyClear(w, r, segs[0], segs[1], "clear")
			return true
		}
	}
	return false
}

// ntfyTopics reports whether seg is one topic or a comma-separated list of
// them, each in ntfy's alphabet (letters, digits, - and _, 1-64 long).
func ntfyTopics(seg string) bool {
	if seg == "" {
		return false
	}
	for t := range strings.SplitSeq(seg, ",") {
		if !ntfy.ValidID(t) {
			return false
		}
	}
	return true
}
