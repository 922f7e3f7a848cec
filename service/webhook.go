package service

import (
	"github.com/heraldhq/herald/transform"
)

// WebhookPayload is the message a transformed webhook sends: its title and
// body cut to the limits of a message (a commit message can be longer than
// a title may be), its link as a url action.
func WebhookPayload(m *transform.Message) *SendPayload {
	title := Clip(m.Title, MaxTitle)
	p := &SendPayload{Title: &title, Body: Clip(m.Body, MaxBodyChars), Priority: m.Priority}
	if m.URL != "" && ValidHTTPURL("url", m.URL) == nil {
		p.Actions = []Action{{Type: "url", Label: Clip(m.URLLabel, MaxLabel), Value: m.URL}}
	}
	return p
}

// Clip cuts s to at most n characters, ending it with "…" when it cuts.
func Clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
