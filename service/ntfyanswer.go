package service

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"

	"github.com/heraldhq/herald/store"
)

// Answers from ntfy clients. An ntfy app can make an HTTP request when a
// button is tapped, but it sends no credential of its own with it, so each
// button of a message streamed to an ntfy subscriber carries a capability:
// a URL that answers that one message with that one action, for the user
// who subscribed, while the credential they subscribed with lives.
//
// A capability holds the user id, the message id, the action key and the
// credential's kind and id, and an HMAC-SHA256 over them and the
// credential's fingerprint, keyed with a secret kept in the database (so
// that every replica checks what any other made). The fingerprint is never
// in the capability: it is read afresh when the capability is used. For an
// API key it is the key while not revoked; for a session, the session
// while it lives; for a password, the stored password hash, so that a new
// password changes it. A deleted user, a revoked key, an ended session or
// a changed password leaves nothing to compute the same HMAC from, and
// changing any field changes the HMAC, so a capability answers nothing
// else. The HMAC is compared in constant time.

// Kinds of credential an ntfy client subscribes with.
const (
	CredentialKey      = "key"
	CredentialSession  = "session"
	CredentialPassword = "password"
)

// Credential names the credential an ntfy client subscribed with: its kind
// and, for a key or a session, its id.
type Credential struct {
	Kind string
	ID   string
}

// capabilityVersion leads every capability, so that its layout can change.
const capabilityVersion = 1

// answerKeySetting names the capability key in the settings.
const answerKeySetting = "ntfy_answer_key"

// errBadCapability is the one answer to every capability that does not
// check out, whatever the reason, so that none tells which.
var errBadCapability = forbidden("this answer link is no longer valid: the message, the action or the credential it was " +
	"made for changed (a key revoked, a password changed, a session ended) or it was altered; " +
	"the notification of a new subscription carries a new one")

// answerKey returns the key capabilities are signed with, generating it on
// first use.
func (s *Service) answerKey(ctx context.Context) ([]byte, error) {
	return s.st.EnsureSetting(ctx, answerKeySetting, func() ([]byte, error) {
		k := make([]byte, 32)
		_, err := rand.Read(k)
		return k, err
	})
}

// fingerprint is what credential c of u is now; ErrNotFound when it no
// longer works.
func (s *Service) fingerprint(ctx context.Context, u *store.User, c Credential) (string, error) {
	switch c.Kind {
	case CredentialKey:
		k, owner, err := s.st.APIKeyByID(ctx, c.ID)
		if err != nil {
			return "", err
		}
		if owner.ID != u.ID {
			return "", ErrNotFound
		}
		return k.ID, nil
	case CredentialSession:
		sess, err := s.st.LiveSession(ctx, c.ID)
		if err != nil {
			return "", err
		}
		if sess.UserID != u.ID {
			return "", ErrNotFound
		}
		return sess.ID, nil
	case CredentialPassword:
		if u.PasswordHash == "" {
			return "", ErrNotFound
		}
		return u.PasswordHash, nil
	}
	return "", ErrNotFound
}

// AnswerCapabilities returns what makes u's capabilities for the
// credential c: capability(messageID, action) answers that message with
// that action. It fails when c no longer works.
func (s *Service) AnswerCapabilities(ctx context.Context, u *store.User, c Credential) (func(messageID, action string) string, error) {
	key, err := s.answerKey(ctx)
	if err != nil {
		return nil, err
	}
	fp, err := s.fingerprint(ctx, u, c)
	if err != nil {
		return nil, err
	}
	return func(messageID, action string) string {
		body := capabilityBody(u.ID, messageID, action, c.Kind, c.ID)
		return base64.RawURLEncoding.EncodeToString(append(body, capabilityMAC(key, body, fp)...))
	}, nil
}

// RespondByCapability answers a message as the user a capability was made
// for, with its action: the same answer as Respond, with the same rules
// and conflicts. A capability that does not check out is Forbidden.
func (s *Service) RespondByCapability(ctx context.Context, capability string) (Answer, error) {
	raw, err := base64.RawURLEncoding.DecodeString(capability)
	if err != nil {
		return Answer{}, errBadCapability
	}
	fields, mac, ok := parseCapability(raw)
	if !ok {
		return Answer{}, errBadCapability
	}
	userID, messageID, action, kind, credID := fields[0], fields[1], fields[2], fields[3], fields[4]
	u, err := s.st.UserByID(ctx, userID)
	if errors.Is(err, store.ErrNotFound) {
		return Answer{}, errBadCapability
	}
	if err != nil {
		return Answer{}, err
	}
	fp, err := s.fingerprint(ctx, u, Credential{Kind: kind, ID: credID})
	if errors.Is(err, store.ErrNotFound) {
		return Answer{}, errBadCapability
	}
	if err != nil {
		return Answer{}, err
	}
	key, err := s.answerKey(ctx)
	if err != nil {
		return Answer{}, err
	}
	if !hmac.Equal(mac, capabilityMAC(key, raw[:len(raw)-sha256.Size], fp)) {
		return Answer{}, errBadCapability
	}
	return s.RespondVia(ctx, u, Via{Device: "ntfy"}, messageID, action, nil)
}

// capabilityBody is the version and the fields, each length-prefixed, so
// that no two lists of fields encode alike.
func capabilityBody(fields ...string) []byte {
	b := []byte{capabilityVersion}
	for _, f := range fields {
		b = binary.AppendUvarint(b, uint64(len(f)))
		b = append(b, f...)
	}
	return b
}

// capabilityFields is how many fields a capability holds.
const capabilityFields = 5

// parseCapability splits a decoded capability into its fields and MAC.
func parseCapability(raw []byte) (fields []string, mac []byte, ok bool) {
	if len(raw) < 1+sha256.Size || raw[0] != capabilityVersion {
		return nil, nil, false
	}
	body, mac := raw[1:len(raw)-sha256.Size], raw[len(raw)-sha256.Size:]
	for range capabilityFields {
		n, k := binary.Uvarint(body)
		if k <= 0 || n > uint64(len(body)-k) {
			return nil, nil, false
		}
		fields = append(fields, string(body[k:k+int(n)]))
		body = body[k+int(n):]
	}
	return fields, mac, len(body) == 0
}

// capabilityMAC is the HMAC of a capability's body and its credential's
// fingerprint.
func capabilityMAC(key, body []byte, fingerprint string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("herald ntfy answer\x00"))
	m.Write(body)
	m.Write(binary.AppendUvarint(nil, uint64(len(fingerprint))))
	m.Write([]byte(fingerprint))
	return m.Sum(nil)
}
