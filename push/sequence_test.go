package push

import (
	"encoding/json"
	"testing"
)

// TestSequenceReplaces: the messages of one sequence share their
// notification's identity on every platform (Web Push tag with renotify,
// FCM tag and collapse key, APNs collapse id), and no other channel's
// sequence of the same name does; a message outside a sequence keeps its
// own, as before.
func TestSequenceReplaces(t *testing.T) {
	g := SequenceGroup("ch_1", "backup")
	if g != SequenceGroup("ch_1", "backup") || g == SequenceGroup("ch_2", "backup") || g == SequenceGroup("ch_1", "backup2") {
		t.Fatalf("SequenceGroup is not stable per channel and sequence: %s", g)
	}
	if len(g) > 64 {
		t.Errorf("group %q is %d bytes; APNs allows 64", g, len(g))
	}
	first := Notification{MessageID: "msg_1", Group: g, Title: "a", Tags: []string{"warning"},
		Click: "https://example.com/c", Icon: "https://example.com/i.png", Image: "https://example.com/p.jpg"}
	second := Notification{MessageID: "msg_2", Group: g, Title: "b"}
	alone := Notification{MessageID: "msg_3", Title: "c"}

	w1, w2, w3 := webPayload(first), webPayload(second), webPayload(alone)
	if w1.Tag != w2.Tag || !w1.Renotify || w3.Tag != Tag("msg_3") || w3.Renotify {
		t.Errorf("web push tags %q %q %q (renotify %v %v)", w1.Tag, w2.Tag, w3.Tag, w1.Renotify, w3.Renotify)
	}
	if w1.Image != first.Image || w1.Icon != first.Icon || w1.Click != first.Click || len(w1.Tags) != 1 {
		t.Errorf("web push payload lost extras: %+v", w1)
	}
	fcm := func(n Notification) map[string]any {
		b, err := fcmPayloadFor("tok", n)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m["message"]
	}
	f1, f3 := fcm(first), fcm(alone)
	android := f1["android"].(map[string]any)
	if android["collapse_key"] != g || android["notification"].(map[string]any)["tag"] != g ||
		android["notification"].(map[string]any)["image"] != first.Image {
		t.Errorf("fcm android %v, want collapse key and tag %s and the image", android, g)
	}
	if data := f1["data"].(map[string]any); data["click_url"] != first.Click || data["tags"] != "warning" {
		t.Errorf("fcm data %v", data)
	}
	if a := f3["android"].(map[string]any); a["collapse_key"] != nil || a["notification"].(map[string]any)["tag"] != "msg_3" {
		t.Errorf("fcm android of a lone message: %v", a)
	}
	if first.CollapseID() != g || alone.CollapseID() != "msg_3" {
		t.Errorf("APNs collapse ids %q %q", first.CollapseID(), alone.CollapseID())
	}
}

func TestLooksLikeImage(t *testing.T) {
	for u, want := range map[string]bool{
		"https://example.com/a.JPG":         true,
		"https://example.com/a.png?x=1":     true,
		"https://example.com/report.pdf":    false,
		"https://example.com/":              false,
		"https://example.com/img.png/":      false,
		"https://example.com/" + "a%ZZ.png": false,
	} {
		if got := LooksLikeImage(u); got != want {
			t.Errorf("LooksLikeImage(%q) = %v, want %v", u, got, want)
		}
	}
}
