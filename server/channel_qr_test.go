package server

import (
	"bytes"
	"image/png"
	"testing"

	"github.com/skip2/go-qrcode"

	"github.com/heraldhq/herald/ntfy"
)

// TestChannelQR: the owner gets the QR code of the ntfy app's subscribe
// link to the channel, and nobody else gets anything.
func TestChannelQR(t *testing.T) {
	e := newTestEnv(t)
	ada, bob := e.newUser("ada@example.com"), e.newUser("bob@example.com")
	ch := e.newChannel(ada, "Disk (RAID)")
	id, token := ch["id"].(string), ch["webhook_token"].(string)
	path := "/v1/channels/" + id + "/qr.png?for=ntfy"

	r := e.do(200, "GET", path, nil, ada.Token)
	if got := r.Header.Get("Content-Type"); got != "image/png" {
		t.Errorf("Content-Type %q, want image/png", got)
	}
	if got := r.Header.Get("Cache-Control"); got != "no-store" {
		t.Errorf("Cache-Control %q, want no-store: the code holds the webhook token", got)
	}
	img, err := png.Decode(bytes.NewReader(r.Raw))
	if err != nil {
		t.Fatalf("the answer is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != qrSize || b.Dy() != qrSize {
		t.Errorf("the PNG is %dx%d, want %dx%d", b.Dx(), b.Dy(), qrSize, qrSize)
	}
	// The encoder is deterministic: the same link gives the same PNG.
	link, err := ntfy.SubscribeLink(e.srv.URL, token, "Disk (RAID)")
	if err != nil {
		t.Fatal(err)
	}
	want, err := qrcode.Encode(link, qrcode.Medium, qrSize)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(r.Raw, want) {
		t.Errorf("the QR code does not encode %s", link)
	}
	// An API key is a credential like a session.
	if r := e.do(200, "GET", path, nil, e.apiKey(ada)); !bytes.Equal(r.Raw, want) {
		t.Error("with an API key: another QR code")
	}

	// A new webhook token makes a new code; the old one subscribes to nothing.
	e.do(200, "POST", "/v1/channels/"+id+"/regenerate", nil, ada.Token)
	if r := e.do(200, "GET", path, nil, ada.Token); bytes.Equal(r.Raw, want) {
		t.Error("after a new webhook token the QR code still holds the old one")
	}

	wantError(t, e.request("GET", path, nil, bob.Token), 404, "not_found")
	wantError(t, e.request("GET", path, nil, ""), 401, "invalid_token")
	wantError(t, e.request("GET", "/v1/channels/"+id+"/qr.png", nil, ada.Token), 400, "invalid_payload")
	wantError(t, e.request("GET", "/v1/channels/"+id+"/qr.png?for=gotify", nil, ada.Token), 400, "invalid_payload")

	// The app's link cannot name a server under a path.
	e.s.baseURL = e.srv.URL + "/herald"
	r = e.request("GET", path, nil, ada.Token)
	wantError(t, r, 404, "not_found")
	if !bytes.Contains(r.Raw, []byte("has a path")) {
		t.Errorf("base_url with a path: %s, want a message saying why", r.Raw)
	}
}
