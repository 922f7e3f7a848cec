package service

import (
	"strings"

	"github.com/heraldhq/herald/transform"
)

// WebhookPayload is the message a transformed webhook sends: its title and
// body cut to the limits of a message (a commit message can be longer than
// a title may be), its link as a url action.
func WebhookPayload(m *transform.Message) *SendPayload {
	title := Clip(noNUL(m.Title), MaxTitle)
	p := &SendPayload{Title: &title, Body: Clip(noNUL(m.Body), MaxBodyChars), Priority: m.Priority}
	if m.URL != "" && ValidHTTPURL("url", m.URL) == nil {
		p.Actions = []Action{{Type: "url", Label: Clip(noNUL(m.URLLabel), MaxLabel), Value: m.URL}}
	}
	return p
}

// noNUL drops the NUL characters of a platform's text, which no database
// column can hold on PostgreSQL; the rest of the text still makes a message.
func noNUL(s string) string {
	if strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(s, "\x00", "")
}

// Clip cuts s to at most n characters, ending it with "…" when it cuts.
func Clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
