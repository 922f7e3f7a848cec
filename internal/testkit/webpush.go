package testkit

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// PushService is a local Web Push service over https, as a browser vendor
// runs one: it takes VAPID-signed pushes for any endpoint path, decrypts
// them (RFC 8291) with the browser keys it made, and keeps the plaintext.
type PushService struct {
	t       testing.TB
	srv     *httptest.Server
	browser *ecdh.PrivateKey
	auth    []byte

	mu  sync.Mutex
	got map[string][][]byte // endpoint path → decrypted payloads
}

// NewPushService starts a push service, stopped at the test's end.
func NewPushService(t testing.TB) *PushService {
	t.Helper()
	p := &PushService{t: t, got: map[string][][]byte{}, auth: make([]byte, 16)}
	var err error
	if p.browser, err = ecdh.P256().GenerateKey(rand.Reader); err != nil {
		t.Fatal(err)
	}
	_, _ = rand.Read(p.auth)
	p.srv = httptest.NewTLSServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	return p
}

// Client trusts the service's certificate.
func (p *PushService) Client() *http.Client { return p.srv.Client() }

// Subscription is the PushSubscription JSON a browser would hand out for
// endpoint path.
func (p *PushService) Subscription(path string) string {
	b, _ := json.Marshal(map[string]any{"endpoint": p.srv.URL + path, "keys": map[string]string{
		"p256dh": base64.RawURLEncoding.EncodeToString(p.browser.PublicKey().Bytes()),
		"auth":   base64.RawURLEncoding.EncodeToString(p.auth)}})
	return string(b)
}

// Payloads returns what was pushed to path, decrypted, oldest first.
func (p *PushService) Payloads(path string) [][]byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([][]byte(nil), p.got[path]...)
}

func (p *PushService) serve(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.Header.Get("Authorization"), "vapid t=") {
		p.t.Errorf("Web Push without VAPID: %q", r.Header.Get("Authorization"))
	}
	body, _ := io.ReadAll(r.Body)
	plain, err := DecryptWebPush(p.browser, p.auth, body)
	if err != nil {
		p.t.Errorf("decrypt Web Push: %v", err)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	p.got[r.URL.Path] = append(p.got[r.URL.Path], plain)
	p.mu.Unlock()
	w.WriteHeader(http.StatusCreated)
}

// DecryptWebPush opens an RFC 8291 aes128gcm body with a browser's key and
// auth secret.
func DecryptWebPush(browser *ecdh.PrivateKey, auth, body []byte) ([]byte, error) {
	if len(body) < 21 || len(body) < 21+int(body[20]) {
		return nil, errors.New("short body")
	}
	salt, keyID := body[:16], body[21:21+int(body[20])]
	if rs := binary.BigEndian.Uint32(body[16:20]); len(body)-21-len(keyID) > int(rs) {
		return nil, errors.New("more than one record")
	}
	sender, err := ecdh.P256().NewPublicKey(keyID)
	if err != nil {
		return nil, err
	}
	secret, err := browser.ECDH(sender)
	if err != nil {
		return nil, err
	}
	ikm, err := hkdf.Key(sha256.New, secret, auth, "WebPush: info\x00"+string(browser.PublicKey().Bytes())+string(keyID), 32)
	if err != nil {
		return nil, err
	}
	cek, _ := hkdf.Key(sha256.New, ikm, salt, "Content-Encoding: aes128gcm\x00", 16)
	nonce, _ := hkdf.Key(sha256.New, ikm, salt, "Content-Encoding: nonce\x00", 12)
	block, err := aes.NewCipher(cek)
	if err != nil {
		return nil, err
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	plain, err := gcm.Open(nil, nonce, body[21+len(keyID):], nil)
	if err != nil {
		return nil, err
	}
	end := len(plain) - 1
	for end >= 0 && plain[end] == 0 {
		end--
	}
	if end < 0 || plain[end] != 0x02 {
		return nil, errors.New("no padding delimiter")
	}
	return plain[:end], nil
}
