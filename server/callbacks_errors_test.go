package server

import (
	"bytes"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/delivery"
)

// cbLogs is a queue logger whose output a test can read.
type cbLogs struct {
	w *lockedWriter
}

func newCBLogs() *cbLogs { return &cbLogs{w: &lockedWriter{w: &bytes.Buffer{}}} }

func (l *cbLogs) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l.w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func (l *cbLogs) String() string {
	l.w.mu.Lock()
	defer l.w.mu.Unlock()
	return l.w.w.(*bytes.Buffer).String()
}

// TestCallbackErrorsShowNoDetail: the delivery log, which the callback's
// owner reads, cannot tell a refused port from a failed TLS handshake, and
// shows no redirect target; the server log has the cause, without the
// URL's query string.
func TestCallbackErrorsShowNoDetail(t *testing.T) {
	e := cbEnv(t)
	f := cbSetup(e, "cb-errors@example.com")
	// A port nothing listens on: connection refused.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := fmt.Sprintf("http://%s/hook?token=refused-secret", ln.Addr())
	ln.Close()
	// A TLS receiver whose certificate nobody trusts: the handshake fails.
	tlsRC := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		t.Error("the TLS receiver got a request")
	}))
	t.Cleanup(tlsRC.Close)
	badTLS := tlsRC.URL + "/hook?token=tls-secret"
	// A receiver that redirects, with a secret in the Location.
	rc := cbNewReceiver(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		http.Redirect(w, r, "/internal/admin?sig=location-secret", http.StatusFound)
	})
	redirect := rc.URL + "/hook?token=redirect-secret"

	logs := newCBLogs()
	cfg := cbQueueConfig()
	cfg.MaxAttempts = 1
	// Every attempt here fails at once; the timeout only has to stay out of
	// the way of a TLS handshake on a loaded machine.
	cfg.Timeout = 30 * time.Second
	cbStartQueue(t, e.st, cfg, delivery.Options{Logger: logs.logger()})

	shown := map[string]string{}
	for name, url := range map[string]string{"refused": refused, "tls": badTLS, "redirect": redirect} {
		id := f.send(url)
		f.tap(id, "approve")
		_, attempts := f.waitState(id, "failed", 5*time.Second)
		if len(attempts) != 1 {
			t.Fatalf("%s: attempts %v, want 1", name, attempts)
		}
		shown[name] = fmt.Sprint(attempts[0]["error"])
		if name != "redirect" && attempts[0]["status_code"] != nil {
			t.Errorf("%s: status %v, want none", name, attempts[0]["status_code"])
		}
	}
	if got, want := shown["refused"], "connection failed"; got != want {
		t.Errorf("refused port shows %q, want %q", got, want)
	}
	if shown["tls"] != shown["refused"] {
		t.Errorf("a TLS failure shows %q and a refused port %q: they must look the same", shown["tls"], shown["refused"])
	}
	if got, want := shown["redirect"], "receiver answered 302; redirects are not followed"; got != want {
		t.Errorf("redirect shows %q, want %q", got, want)
	}

	log := logs.String()
	for _, secret := range []string{"refused-secret", "tls-secret", "redirect-secret", "location-secret", "token="} {
		if strings.Contains(log, secret) {
			t.Errorf("the server log shows %q:\n%s", secret, log)
		}
	}
	for _, want := range []string{
		"url=" + strings.TrimSuffix(refused, "?token=refused-secret"), "connection refused",
		"url=" + strings.TrimSuffix(badTLS, "?token=tls-secret"), "certificate",
		"redirect to " + rc.URL + "/internal/admin not followed",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the server log lacks %q:\n%s", want, log)
		}
	}
}
