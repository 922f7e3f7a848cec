// Package web is Herald's embedded admin web UI, served as one http.Handler.
package web

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed static
var static embed.FS

// csp is the admin UI's Content-Security-Policy: only its own files, but
// for pictures: a message's icon_url and attach_url, which its sender
// chose, are shown from where they are (without a referrer). The
// service worker and the web app manifest are named although default-src
// already covers them, so that the policy says what the app loads.
const csp = "default-src 'self'; img-src 'self' data: https: http:; style-src 'self'; script-src 'self'; worker-src 'self'; manifest-src 'self'; frame-ancestors 'none'"

// Handler serves the admin UI's files.
func Handler() http.Handler {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic("web: embedded files missing: " + err.Error())
	}
	files := http.FileServer(http.FS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("Referrer-Policy", "no-referrer")
		w.Header().Set("Content-Security-Policy", csp)
		// Revalidated on every load, so an upgrade reaches the browser.
		w.Header().Set("Cache-Control", "no-cache")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		switch r.URL.Path {
		case "/manifest.webmanifest":
			// Not in every system's MIME table.
			w.Header().Set("Content-Type", "application/manifest+json")
		case "/sw.js":
			// The worker controls the whole app; saying so keeps that true
			// should it ever move below the root.
			w.Header().Set("Service-Worker-Allowed", "/")
		}
		files.ServeHTTP(w, r)
	})
}
