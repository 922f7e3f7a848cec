package server

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/ntfy"
)

// ntfyButton streams one message with an "ack" button to a subscription
// made with auth and returns the message id and the button's answer path.
func ntfyButton(t *testing.T, f *ntfyFixture, auth string) (id, path string) {
	t.Helper()
	id = streamSend(f.env, f.token, "Deploy?")
	for _, l := range ntfyPoll(f.env, "/"+f.token+"/json?poll=1", auth) {
		if l.str("sequence_id") == id {
			acts := l.actions()
			if len(acts) != 1 || acts[0]["action"] != "http" {
				t.Fatalf("actions %v, want one http action", acts)
			}
			return id, strings.TrimPrefix(acts[0]["url"].(string), f.env.srv.URL)
		}
	}
	t.Fatalf("message %s was not streamed", id)
	return "", ""
}

// capabilityFieldsOf decodes the fields of an answer path's capability.
func capabilityFieldsOf(t *testing.T, path string) (fields []string, mac []byte) {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(path, ntfyAnswerPath))
	if err != nil {
		t.Fatal(err)
	}
	body := raw[1 : len(raw)-32]
	for len(body) > 0 {
		n, k := binary.Uvarint(body)
		fields = append(fields, string(body[k:k+int(n)]))
		body = body[k+int(n):]
	}
	return fields, raw[len(raw)-32:]
}

// capabilityWith is an answer path with fields and mac.
func capabilityWith(fields []string, mac []byte) string {
	b := []byte{1}
	for _, f := range fields {
		b = binary.AppendUvarint(b, uint64(len(f)))
		b = append(b, f...)
	}
	return ntfyAnswerPath + base64.RawURLEncoding.EncodeToString(append(b, mac...))
}

// TestNtfyAnswerThreats: a button's answer URL answers only its message
// with its action as its subscriber, and stops when the credential the
// subscription used stops.
func TestNtfyAnswerThreats(t *testing.T) {
	t.Parallel()
	tap := func(f *ntfyFixture, path string) response { return f.env.request("POST", path, nil, "") }

	t.Run("another message or action or user", func(t *testing.T) {
		f := ntfySetup(t)
		bob := f.env.newUser("bob@example.com")
		id, path := ntfyButton(t, f, f.auth)
		other := streamSend(f.env, f.token, "Other?")
		fields, mac := capabilityFieldsOf(t, path)
		if fields[0] != f.ann.ID || fields[1] != id || fields[2] != "ack" {
			t.Fatalf("capability fields %q", fields)
		}
		for _, change := range map[string]func([]string){
			"message": func(fs []string) { fs[1] = other },
			"action":  func(fs []string) { fs[2] = "nack" },
			"user":    func(fs []string) { fs[0] = bob.ID },
			"kind":    func(fs []string) { fs[3] = "key" },
		} {
			fs := append([]string(nil), fields...)
			change(fs)
			wantError(t, tap(f, capabilityWith(fs, mac)), 403, "forbidden")
		}
		flipped := append([]byte(nil), mac...)
		flipped[0] ^= 1
		wantError(t, tap(f, capabilityWith(fields, flipped)), 403, "forbidden")
		wantError(t, tap(f, ntfyAnswerPath+"garbage"), 403, "forbidden")
		wantError(t, tap(f, ntfyAnswerPath+base64.RawURLEncoding.EncodeToString([]byte{1, 2, 3})), 403, "forbidden")
		// Nothing was answered by any of them; the real one still answers.
		if r := tap(f, path); r.Status != 200 {
			t.Fatalf("the real tap: %d %s", r.Status, r.Raw)
		}
		// Bob's own subscription cannot reach Ann's message at all.
		if status, _, _ := ntfyGet(f.env, "/"+f.token+"/json?poll=1", ntfyBasic(bob.Email, bob.Password)); status != 404 {
			t.Fatalf("bob polls ann's topic: %d, want 404", status)
		}
	})

	t.Run("key revoked", func(t *testing.T) {
		f := ntfySetup(t)
		key := f.env.do(201, "POST", "/v1/keys", map[string]string{"name": "phone"}, f.ann.Token)
		_, path := ntfyButton(t, f, ntfyBasic("", key.Str("key")))
		f.env.do(200, "DELETE", "/v1/keys/"+key.Str("id"), nil, f.ann.Token)
		wantError(t, tap(f, path), 403, "forbidden")
	})

	t.Run("password changed", func(t *testing.T) {
		f := ntfySetup(t)
		_, path := ntfyButton(t, f, f.auth)
		hash, err := auth.HashPassword(context.Background(), "a new password")
		if err != nil {
			t.Fatal(err)
		}
		if err := f.env.st.SetUserPassword(context.Background(), f.ann.ID, hash, ""); err != nil {
			t.Fatal(err)
		}
		wantError(t, tap(f, path), 403, "forbidden")
	})

	t.Run("session ended", func(t *testing.T) {
		f := ntfySetup(t)
		_, path := ntfyButton(t, f, "Bearer "+f.ann.Token)
		f.env.do(200, "POST", "/v1/auth/logout", nil, f.ann.Token)
		wantError(t, tap(f, path), 403, "forbidden")
	})

	t.Run("account deleted", func(t *testing.T) {
		f := ntfySetup(t)
		_, path := ntfyButton(t, f, f.auth)
		if err := f.env.st.DeleteUser(context.Background(), f.ann.ID); err != nil {
			t.Fatal(err)
		}
		wantError(t, tap(f, path), 403, "forbidden")
	})

	t.Run("never logged", func(t *testing.T) {
		f := ntfySetup(t)
		_, path := ntfyButton(t, f, f.auth)
		tap(f, path)
		wantError(t, tap(f, path), 409, "already_responded")
		capability := strings.TrimPrefix(path, ntfyAnswerPath)
		logs := f.env.logs.String()
		if strings.Contains(logs, capability) || strings.Contains(logs, capability[:24]) || strings.Contains(logs, f.token) {
			t.Fatal("the access log shows a capability or a topic")
		}
		if !strings.Contains(logs, ntfyAnswerPath+"REDACTED") {
			t.Fatalf("the access log does not show the redacted answer path:\n%s", logs)
		}
	})
}

// TestNtfyApprovals: an approver who accepted reads the channel's approval
// messages over ntfy and votes with a tap, counted as their vote; the
// owner, not an approver, sees no buttons; an approver who has not
// accepted cannot subscribe.
func TestNtfyApprovals(t *testing.T) {
	t.Parallel()
	f := aprSetup(t)
	f.rule(2, 3600, f.b, f.c)
	f.env.acceptInvitations(f.b)
	bobAuth := ntfyBasic(f.b.Email, f.b.Password)
	id := f.send()
	var bobLine ntfyLine
	for _, l := range ntfyPoll(f.env, "/"+f.token+"/json?poll=1", bobAuth) {
		if l.str("sequence_id") == id {
			bobLine = l
		}
	}
	acts := bobLine.actions()
	if len(acts) != 2 || acts[0]["label"] != "Approve" || acts[1]["label"] != "Reject" {
		t.Fatalf("bob's actions %v, want Approve and Reject", acts)
	}
	annLines := ntfyPoll(f.env, "/"+f.token+"/json?poll=1", ntfyBasic(f.a.Email, f.a.Password))
	if len(annLines) != 1 || len(annLines[0].actions()) != 0 {
		t.Fatalf("the owner's lines %v, want the message without buttons", annLines)
	}
	if status, _, _ := ntfyGet(f.env, "/"+f.token+"/auth", ntfyBasic(f.c.Email, f.c.Password)); status != 404 {
		t.Fatalf("cat, invited but not accepted: %d, want 404", status)
	}

	r := f.env.request("POST", strings.TrimPrefix(acts[0]["url"].(string), f.env.srv.URL), nil, "")
	if r.Status != 200 || r.Str("approval_status") != "pending" {
		t.Fatalf("bob's tap: %d %s, want a pending vote", r.Status, r.Raw)
	}
	_, approval := f.message(id, f.a)
	votes, _ := approval["votes"].([]any)
	if len(votes) != 1 || votes[0].(map[string]any)["user_id"] != f.b.ID || votes[0].(map[string]any)["action"] != "approve" {
		t.Fatalf("votes %v, want bob's approval", votes)
	}
	wantError(t, f.env.request("POST", strings.TrimPrefix(acts[1]["url"].(string), f.env.srv.URL), nil, ""), 409, "already_voted")
	for _, l := range ntfyPoll(f.env, "/"+f.token+"/json?poll=1", bobAuth) {
		if l.str("sequence_id") == id && (len(l.actions()) != 0 || l.str("event") != ntfy.EventMessage) {
			t.Fatalf("after voting bob sees %v, want the message without buttons", l)
		}
	}
}
