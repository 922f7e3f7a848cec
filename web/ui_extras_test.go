package web_test

// Browser tests of what a message carries beside its text: tags, icon,
// click URL, attachment, sequences and scheduled delivery.

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// TestUIExtras: tags show as chips, the icon and a picture attachment as
// pictures (fetched without a referrer), another attachment as a link
// named after its file, the click URL on the title; of a sequence only the
// newest message is listed, and a scheduled message says when it goes.
func TestUIExtras(t *testing.T) {
	var hits, referred atomic.Int32
	pics := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.Header.Get("Referer") != "" {
			referred.Add(1)
		}
		w.Header().Set("Content-Type", "image/gif")
		// A 1x1 GIF.
		_, _ = w.Write([]byte("GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;"))
	}))
	t.Cleanup(pics.Close)
	e, b, _ := setup(t)
	tok := e.token(adaEmail, adaPassword)
	_, webhook := e.channel(tok, "Homelab")
	rich := e.send(webhook, map[string]any{"title": "Disk low", "body": "**92%** used", "tags": []string{"warning", "nas"},
		"icon_url": pics.URL + "/icon.gif", "click_url": "https://nas.example.com/storage", "attach_url": pics.URL + "/chart.png"})
	file := e.send(webhook, map[string]any{"title": "Report", "attach_url": "https://nas.example.com/files/report%202026.pdf"})
	e.send(webhook, map[string]any{"title": "Backup running", "sequence_id": "backup"})
	latest := e.send(webhook, map[string]any{"title": "Backup done", "sequence_id": "backup"})
	later := e.send(webhook, map[string]any{"title": "Reminder", "deliver_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})

	b.signIn(adaEmail, adaPassword)
	b.openView("messages")
	b.waitFor("the messages", shownJS(articleSel(later))+" && "+shownJS(articleSel(latest))+" && "+loaded())
	b.waitFor("the pictures loaded", `Array.from(`+articleJS(rich)+`.querySelectorAll("img")).every(i => i.complete && i.naturalWidth === 1)`)
	type card struct {
		Tags    []string
		Icon    string
		Picture string
		Click   string
		Link    string
		LinkTxt string
		Titles  []string
		Status  string
		Sched   bool
	}
	got := eval[card](b, `((r, f, l) => ({
		Tags: Array.from(r.querySelectorAll(".message-tags .tag-chip")).map(c => c.textContent),
		Icon: r.querySelector("img.message-icon") ? r.querySelector("img.message-icon").getAttribute("src") : "",
		Picture: r.querySelector(".message-attachment img") ? r.querySelector(".message-attachment img").getAttribute("src") : "",
		Click: r.querySelector(".message-title a.message-click") ? r.querySelector(".message-title a.message-click").getAttribute("href") : "",
		Link: f.querySelector(".message-attachment-link a") ? f.querySelector(".message-attachment-link a").getAttribute("href") : "",
		LinkTxt: f.querySelector(".message-attachment-link a") ? f.querySelector(".message-attachment-link a").textContent : "",
		Titles: Array.from(document.querySelectorAll("#messages article.message .message-title")).map(h => h.textContent),
		Status: l.querySelector(".message-status") ? l.querySelector(".message-status").textContent : "",
		Sched: !!l.querySelector(".message-scheduled time"),
	}))(`+articleJS(rich)+`, `+articleJS(file)+`, `+articleJS(later)+`)`)
	if len(got.Tags) != 2 || got.Tags[0] != "warning" || got.Tags[1] != "nas" {
		t.Errorf("tags %q, want [warning nas]", got.Tags)
	}
	if got.Icon != pics.URL+"/icon.gif" || got.Picture != pics.URL+"/chart.png" {
		t.Errorf("icon %q, picture %q", got.Icon, got.Picture)
	}
	if got.Click != "https://nas.example.com/storage" {
		t.Errorf("title links to %q", got.Click)
	}
	if got.Link != "https://nas.example.com/files/report%202026.pdf" || got.LinkTxt != "Attachment: report 2026.pdf" {
		t.Errorf("file attachment %q %q", got.Link, got.LinkTxt)
	}
	backups := 0
	for _, title := range got.Titles {
		if title == "Backup running" {
			t.Errorf("the sequence's older message is listed: %q", got.Titles)
		}
		if title == "Backup done" {
			backups++
		}
	}
	if backups != 1 {
		t.Errorf("the sequence's newest message is listed %d times: %q", backups, got.Titles)
	}
	if got.Status != "Scheduled" || !got.Sched {
		t.Errorf("scheduled message: status %q, time shown %v", got.Status, got.Sched)
	}
	if hits.Load() < 2 || referred.Load() != 0 {
		t.Errorf("picture server: %d requests, %d with a Referer; want 2 or more, none", hits.Load(), referred.Load())
	}
	mustErrorEmpty(b)
}
