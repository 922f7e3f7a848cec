package web_test

// Browser test of a push sent during quiet hours in silent mode.

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"

	"github.com/heraldhq/herald/store"
)

// TestPWAQuietHoursSilent: with quiet hours on in silent mode, a high
// priority message's push carries the silent flag, and the real service
// worker shows it silently: no sound, not insisting, not alerting again.
// An urgent message goes through the quiet hours: its notification stays
// until acted on, alerts again, and has its Acknowledge button.
func TestPWAQuietHoursSilent(t *testing.T) {
	p := newPWA(t)
	e := p.env
	ada := e.addUser(adaEmail, adaPassword)
	tok := e.token(adaEmail, adaPassword)
	if status, body := e.api(http.MethodPost, "/v1/devices", tok, map[string]string{"platform": "web", "name": "Chromium",
		"push_token": p.pushes.Subscription("/push/ada")}); status != http.StatusCreated {
		t.Fatalf("register the web device: %d %v", status, body)
	}
	// Quiet now, whenever the test runs: from an hour ago to an hour on.
	now := time.Now().UTC()
	q := store.QuietHours{Enabled: true, Start: now.Add(-time.Hour).Format("15:04"), End: now.Add(time.Hour).Format("15:04"),
		TimeZone: "UTC", Mode: store.QuietSilent}
	if err := e.st.SetQuietHours(context.Background(), ada.ID, q); err != nil {
		t.Fatal(err)
	}

	b := newBrowser(t, e)
	b.signIn(adaEmail, adaPassword)
	b.setNotifications(cdpbrowser.PermissionSettingGranted)
	b.waitWorker()
	reg := b.registrationID()

	_, webhook := e.channel(tok, "Backups")
	msg := e.send(webhook, map[string]any{"title": "Backup finished", "body": "nightly, 42 GB", "priority": "high"})
	payload := p.waitPayload("/push/ada", "message", msg)
	var sent map[string]any
	if err := json.Unmarshal(payload, &sent); err != nil || sent["silent"] != true {
		t.Fatalf("push payload = %s, want silent true", payload)
	}
	n := b.pushNotification(reg, payload, "herald-"+msg, "nightly, 42 GB")
	if !n.Silent || n.RequireInteraction || n.Renotify {
		t.Errorf("notification in quiet hours = %+v, want silent, not requiring interaction, not renotifying", n)
	}

	urgentWebhook := webhook
	chID := e.list("/v1/channels", "channels", tok)[0]["id"].(string)
	if status, body := e.api(http.MethodPatch, "/v1/channels/"+chID, tok, map[string]any{"urgent": map[string]any{}}); status != http.StatusOK {
		t.Fatalf("turn on urgent messages: %d %v", status, body)
	}
	alert := e.send(urgentWebhook, map[string]any{"title": "UPS on battery", "body": "ups@nas", "priority": "urgent"})
	payload = p.waitPayload("/push/ada", "message", alert)
	sent = nil
	if err := json.Unmarshal(payload, &sent); err != nil || sent["silent"] != nil || sent["require_interaction"] != true {
		t.Fatalf("urgent push payload in quiet hours = %s, want not silent, require_interaction", payload)
	}
	n = b.pushNotification(reg, payload, "herald-"+alert, "ups@nas")
	if n.Silent || !n.RequireInteraction || !n.Renotify || len(n.Actions) == 0 || n.Actions[len(n.Actions)-1].Title != "Acknowledge" {
		t.Errorf("urgent notification in quiet hours = %+v, want loud, requiring interaction, renotifying, with Acknowledge", n)
	}
}
