package server

import (
	"mime"
	"net/http"
	"net/url"
	"strings"
)

// checkOrigin refuses a request that a browser sent on behalf of another
// site. It guards what a cookie makes possible: the endpoints that set the
// session cookie, and every cookie-authenticated change.
//
// Browsers send Origin on every cross-origin request that is not a GET or
// HEAD; when it is present it must be this server's own origin (base_url's,
// or the one the request was addressed to). Without Origin, Sec-Fetch-Site
// must not say another site sent it. A request with neither header comes
// from no browser (curl, an app) and passes; bearer-token requests never
// get here.
func (s *Server) checkOrigin(r *http.Request) error {
	if o := r.Header.Get("Origin"); o != "" {
		if !s.ownOrigin(r, o) {
			return errForbidden("cross-site request refused: Origin %s is not this server's (%s)", o, s.baseURL)
		}
		return nil
	}
	switch site := r.Header.Get("Sec-Fetch-Site"); site {
	case "cross-site", "same-site":
		return errForbidden("cross-site request refused: Sec-Fetch-Site is %s", site)
	}
	return nil
}

// ownOrigin reports whether origin is base_url's origin or that of the
// request's Host (which a browser sets to where it sends the request, so a
// server reached by another name or address still recognises its own page).
func (s *Server) ownOrigin(r *http.Request, origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return false // "null", or not an origin at all
	}
	got := canonicalOrigin(u.Scheme, u.Host)
	if b, err := url.Parse(s.baseURL); err == nil && got == canonicalOrigin(b.Scheme, b.Host) {
		return true
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	} else if u.Scheme == "https" {
		scheme = "https" // TLS ended at a proxy in front of Herald
	}
	return got == canonicalOrigin(scheme, r.Host)
}

// canonicalOrigin is scheme://host in lower case, without the scheme's
// default port.
func canonicalOrigin(scheme, host string) string {
	scheme, host = strings.ToLower(scheme), strings.ToLower(host)
	switch {
	case scheme == "http" && strings.HasSuffix(host, ":80"):
		host = strings.TrimSuffix(host, ":80")
	case scheme == "https" && strings.HasSuffix(host, ":443"):
		host = strings.TrimSuffix(host, ":443")
	}
	return scheme + "://" + host
}

// requireJSON refuses a body that is not declared JSON. A page on another
// site can only send a form or text/plain body without asking the server
// first (a CORS preflight, which Herald never grants), so insisting on
// application/json where a cookie gets set keeps such pages out even where
// a browser sends no Origin. With allowNone a request without Content-Type
// (one without a body) passes.
func requireJSON(r *http.Request, allowNone bool) error {
	ct := r.Header.Get("Content-Type")
	if ct == "" && allowNone {
		return nil
	}
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
		return newError(http.StatusUnsupportedMediaType, "unsupported_media_type",
			"send the body as JSON, with Content-Type: application/json")
	}
	return nil
}
