package server

import (
	"bytes"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/ntfy"
	"github.com/heraldhq/herald/service"
)

// longText is n characters of UTF-8 text in lines, some of them two bytes
// long, as a log or a report is.
func longText(t *testing.T, n int) []byte {
	t.Helper()
	line := "2024-05-01 03:00:01 backup: copied 1 file, 0 errors, état: ok\n"
	var b strings.Builder
	chars := 0
	for ll := utf8.RuneCountInString(line); chars+ll <= n; chars += ll {
		b.WriteString(line)
	}
	for ; chars < n; chars++ {
		b.WriteByte('x')
	}
	if got := utf8.RuneCountInString(b.String()); got != n {
		t.Fatalf("longText: %d characters, want %d", got, n)
	}
	return []byte(b.String())
}

// ntfyFileBytes reads the file an ntfy answer's attachment links to,
// through its signed link, and fails t unless it is want.
func ntfyFileBytes(t *testing.T, e *testEnv, m ntfy.Message, want []byte) {
	t.Helper()
	if m.Attachment == nil {
		t.Fatalf("answer %+v has no attachment", m)
	}
	lu, err := url.Parse(m.Attachment.URL)
	if err != nil || lu.Query().Get("sig") == "" {
		t.Fatalf("attachment url %q: want a signed link", m.Attachment.URL)
	}
	if r := attGet(t, e, lu.RequestURI(), ""); r.status != 200 || !bytes.Equal(r.body, want) {
		t.Fatalf("signed link: %d, %d bytes; want 200 with the %d bytes sent", r.status, len(r.body), len(want))
	}
}

// TestNtfyLongTextIsFile: a text body longer than a message may be
// (service.MaxBodyChars characters) is kept as a file named
// attachment.txt, as ntfy keeps a text body over its message limit; one
// that fits, surrounding space trimmed, is still the message.
func TestNtfyLongTextIsFile(t *testing.T) {
	e := newTestEnv(t)
	u := e.newUser("ntfylong@example.com")
	_, token := msgChannel(e, u, "Reports")

	text := longText(t, 50000)
	m, _ := ntfyPublish(t, e, 200, "PUT", "/"+token, text)
	if m.Message != "You received a file: attachment.txt" || m.Attachment == nil || m.Attachment.Name != "attachment.txt" ||
		m.Attachment.Type != "text/plain" || m.Attachment.Size != int64(len(text)) {
		t.Fatalf("answer %+v, attachment %+v: want the body as attachment.txt", m, m.Attachment)
	}
	ntfyFileBytes(t, e, m, text)
	if sm, x := storedExtras(t, e, m.ID); sm.Body != "You received a file: attachment.txt" || x.Attachment == nil ||
		x.Attachment.Name != "attachment.txt" || x.Attachment.Size != int64(len(text)) {
		t.Errorf("stored %q, attachment %+v", sm.Body, x.Attachment)
	}

	// The message parameter is the message of such a file.
	m2, _ := ntfyPublish(t, e, 200, "POST", "/"+token, text, "X-Message", "Nightly report")
	if m2.Message != "Nightly report" || m2.Attachment == nil || m2.Attachment.Name != "attachment.txt" {
		t.Errorf("with X-Message: %+v, %+v", m2, m2.Attachment)
	}

	// At the limit, counted in characters once trimmed, it is the message.
	fits := longText(t, service.MaxBodyChars)
	m3, _ := ntfyPublish(t, e, 200, "PUT", "/"+token, append(append([]byte("\n  "), fits...), "\n\n"...))
	if m3.Message != string(fits) || m3.Attachment != nil {
		t.Errorf("%d characters and space: message of %d characters, attachment %+v; want the message",
			service.MaxBodyChars, utf8.RuneCountInString(m3.Message), m3.Attachment)
	}
	over := longText(t, service.MaxBodyChars+1)
	m4, _ := ntfyPublish(t, e, 200, "PUT", "/"+token, over)
	if m4.Attachment == nil || m4.Attachment.Name != "attachment.txt" {
		t.Errorf("%d characters: %+v; want a file", service.MaxBodyChars+1, m4.Attachment)
	}

	// With an attach URL the body is the message, and too long a one is
	// refused as before.
	before := messageCount(t, e)
	_, ne := ntfyPublish(t, e, 400, "PUT", "/"+token, text, "X-Attach", "https://cam.example.com/a.jpg")
	if !strings.Contains(ne.Error, "10000") {
		t.Errorf("long body with an attach URL: %+v; want the limit named", ne)
	}
	if n := messageCount(t, e); n != before {
		t.Errorf("%d messages stored by the refused publish", n-before)
	}
}

// TestNtfyLongTextAttachmentsOff: with attachments off, a text body too
// long for a message is refused in ntfy's shape, naming the limit and the
// setting, and nothing is stored.
func TestNtfyLongTextAttachmentsOff(t *testing.T) {
	e := newTestEnv(t, func(c *config.Config) { c.Attachments.Enabled = false })
	u := e.newUser("ntfylongoff@example.com")
	_, token := msgChannel(e, u, "Reports")
	_, ne := ntfyPublish(t, e, 400, "PUT", "/"+token, longText(t, 50000))
	if ne.Code != ntfy.CodeBadRequest || !strings.Contains(ne.Error, "10000") || !strings.Contains(ne.Error, "attachments.enabled") {
		t.Errorf("error %+v: want 40000 naming the limit and attachments.enabled", ne)
	}
	if n := messageCount(t, e); n != 0 {
		t.Errorf("%d messages stored", n)
	}
	if n := attCount(t, e, "attachments"); n != 0 {
		t.Errorf("%d attachments stored", n)
	}
}
