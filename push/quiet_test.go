package push

import (
	"context"
	"encoding/json"
	"testing"
)

// TestSilentPushes: a notification marked Silent (its user's quiet hours)
// reaches each platform in its quiet form, even at high priority: APNs
// passive without sound; FCM normal priority, no sound, notification
// priority low and a data flag; Web Push a payload the service worker
// shows silently, which does not alert again within a sequence.
func TestSilentPushes(t *testing.T) {
	n := Notification{MessageID: "msg_quiet0123456789abcdef", ChannelID: "ch_quiet", Title: "Backup done", Body: "at night",
		Priority: "high", Group: SequenceGroup("ch_quiet", "backup"), Silent: true, Actions: json.RawMessage(`[]`)}

	t.Run("apns", func(t *testing.T) {
		f, a := newFakeAPNs(t)
		if err := a.Send(context.Background(), "a1b2c3", n); err != nil {
			t.Fatal(err)
		}
		aps, _ := f.last().Payload["aps"].(map[string]any)
		if got, ok := aps["sound"]; ok {
			t.Errorf("aps.sound = %v, want none", got)
		}
		if got, want := aps["interruption-level"], "passive"; got != want {
			t.Errorf("aps.interruption-level = %v, want %q", got, want)
		}
	})
	t.Run("fcm", func(t *testing.T) {
		g, f := newFakeGoogle(t)
		if err := f.Send(context.Background(), "android-token", n); err != nil {
			t.Fatal(err)
		}
		m := g.lastMessage()
		android, _ := m["android"].(map[string]any)
		an, _ := android["notification"].(map[string]any)
		if got, want := android["priority"], "NORMAL"; got != want {
			t.Errorf("android.priority = %v, want %q", got, want)
		}
		if got, ok := an["sound"]; ok {
			t.Errorf("android.notification.sound = %v, want none", got)
		}
		if got, want := an["notification_priority"], "PRIORITY_LOW"; got != want {
			t.Errorf("android.notification.notification_priority = %v, want %q", got, want)
		}
		if data, _ := m["data"].(map[string]any); data["silent"] != "true" {
			t.Errorf("data = %v, want silent \"true\"", data)
		}
	})
	t.Run("webpush", func(t *testing.T) {
		f, wp := newFakePushService(t)
		if err := wp.Send(context.Background(), f.browser.subscription(f.srv.URL+"/push/quiet"), n); err != nil {
			t.Fatal(err)
		}
		p := f.last().Payload
		if p["silent"] != true {
			t.Errorf("payload silent = %v, want true", p["silent"])
		}
		if _, ok := p["renotify"]; ok {
			t.Errorf("payload renotify = %v, want none on a silent push", p["renotify"])
		}
	})

	// Not silent: the loud form is kept (the flag is what changes it).
	loud := n
	loud.Silent = false
	if p := webPayload(loud); p.Silent || !p.Renotify {
		t.Errorf("a loud push's payload: silent %v renotify %v, want false, true", p.Silent, p.Renotify)
	}
	b, err := fcmPayloadFor("tok", loud)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Message struct {
			Data    map[string]string `json:"data"`
			Android fcmAndroid        `json:"android"`
		} `json:"message"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Message.Android.Notification.Sound != "default" || m.Message.Data["silent"] != "" {
		t.Errorf("a loud high push to FCM: sound %q, data %v", m.Message.Android.Notification.Sound, m.Message.Data)
	}
}
