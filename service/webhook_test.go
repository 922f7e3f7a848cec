package service

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/heraldhq/herald/transform"
)

// TestWebhookPayloadSendable: whatever a transformer makes of a webhook, the
// message it sends is within every limit.
func TestWebhookPayloadSendable(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("ä", 300)
	for _, m := range []*transform.Message{
		{Title: long, Body: strings.Repeat("b", 20000), Priority: "high", URL: "https://github.com/o/r/pull/1", URLLabel: long},
		{Title: "short", Priority: "normal", URL: "javascript:alert(1)", URLLabel: "x"},
		{Title: "no link", Priority: "low"},
	} {
		p := WebhookPayload(m)
		if err := CheckSend(p); err != nil {
			t.Fatalf("WebhookPayload(%.20q...) is not sendable: %v", m.Title, err)
		}
		if n := utf8.RuneCountInString(*p.Title); n > MaxTitle || (len(m.Title) > MaxTitle && !strings.HasSuffix(*p.Title, "…")) {
			t.Errorf("title of %d characters: %q", n, *p.Title)
		}
		if (m.URL == "https://github.com/o/r/pull/1") != (len(p.Actions) == 1) {
			t.Errorf("link %q gave actions %+v", m.URL, p.Actions)
		}
	}
}

// TestWebhookPayloadDropsNUL: a platform's text with a NUL (a commit
// message can hold one) still makes a message, without the NUL, which
// PostgreSQL could not store.
func TestWebhookPayloadDropsNUL(t *testing.T) {
	t.Parallel()
	p := WebhookPayload(&transform.Message{Title: "fix\x00: tests", Body: "a\x00b", Priority: "normal",
		URL: "https://github.com/o/r/commit/1", URLLabel: "View\x00 commit"})
	if *p.Title != "fix: tests" || p.Body != "ab" || len(p.Actions) != 1 || p.Actions[0].Label != "View commit" {
		t.Fatalf("payload %q %q %+v, want the text without its NULs", *p.Title, p.Body, p.Actions)
	}
}
