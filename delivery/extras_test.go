package delivery

import (
	"encoding/json"
	"testing"

	"github.com/heraldhq/herald/push"
	"github.com/heraldhq/herald/store"
)

// TestWithExtras: a push carries the message's sequence group, tags,
// click and icon, and its attachment as a picture only when it looks like
// one; a plain message adds nothing.
func TestWithExtras(t *testing.T) {
	m := &store.Message{ID: "msg_1", ChannelID: "ch_1", SequenceID: "backup",
		Extras: json.RawMessage(`{"tags":["ok"],"click_url":"https://example.com/c","icon_url":"https://example.com/i.png","attach_url":"https://example.com/p.webp"}`)}
	var n push.Notification
	withExtras(&n, m)
	if n.Group != push.SequenceGroup("ch_1", "backup") || n.Image != "https://example.com/p.webp" ||
		n.Click != "https://example.com/c" || n.Icon != "https://example.com/i.png" || len(n.Tags) != 1 {
		t.Errorf("notification %+v", n)
	}
	m.Extras = json.RawMessage(`{"attach_url":"https://example.com/report.pdf"}`)
	n = push.Notification{}
	withExtras(&n, m)
	if n.Image != "" {
		t.Errorf("a pdf pushed as a picture: %q", n.Image)
	}
	n = push.Notification{}
	withExtras(&n, &store.Message{ID: "msg_2"})
	if n.Group != "" || n.Image != "" || n.Tags != nil {
		t.Errorf("plain message: %+v", n)
	}
}
