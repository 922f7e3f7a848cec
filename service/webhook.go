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
// It reads at most n+1 characters of s and copies only what it keeps, so
// clipping a long text costs what is kept (a template's truncate relies on
// it). Bytes that are not UTF-8 come out as U+FFFD, as in []rune(s).
func Clip(s string, n int) string {
	count := 0
	for range s {
		if count++; count > n {
			var b strings.Builder
			b.Grow(min(len(s), 4*n))
			kept := 0
			for _, r := range s {
				if kept++; kept == n {
					break
				}
				b.WriteRune(r)
			}
			b.WriteString("…")
			return b.String()
		}
	}
	return s
}
