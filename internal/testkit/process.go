package testkit

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

// This file holds what the tests that run herald serve share, whether they
// run it in their own process (cli) or as the real binary (e2e): a free
// port, a log buffer, and waits for the server to answer.

// FreeAddr returns a loopback address that was free a moment ago.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// SyncBuffer is a bytes.Buffer safe for a server's goroutines (or os/exec's
// copying goroutine) and the test.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p, as bytes.Buffer.Write does.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// WaitFor polls cond until it holds; it fails the test after within.
func WaitFor(t testing.TB, what string, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %s", what, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// WaitHealthy polls base/healthz until it answers 200. It fails the test if
// exited is closed first or within passes; logs goes in the failure
// message.
func WaitHealthy(t testing.TB, base string, exited <-chan struct{}, within time.Duration, logs fmt.Stringer) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		res, err := http.Get(base + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-exited:
			t.Fatalf("the server exited before it became healthy:\n%s", logs)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s/healthz did not answer 200 within %s (last error %v):\n%s", base, within, err, logs)
		}
	}
}

// WaitReady polls ready until it returns nil, for up to a minute; a value
// on exited (the server ended) ends the wait early.
func WaitReady(t testing.TB, ready func() error, exited <-chan error, logs fmt.Stringer) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		err := ready()
		if err == nil {
			return
		}
		select {
		case e := <-exited:
			t.Fatalf("herald serve ended (%v) before it was ready:\n%s", e, logs)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("herald serve not ready within a minute (%v):\n%s", err, logs)
		}
	}
}

// jsonClient makes CallJSON's requests.
var jsonClient = &http.Client{Timeout: 10 * time.Second}

// CallJSON sends body, when not nil, as JSON, with token, when not empty, as
// the bearer token, and decodes the JSON answer into out. It returns the
// status; an answer that is not JSON is an error.
func CallJSON(method, url string, body, out any, token string) (int, error) {
	r, err := Call(jsonClient, method, url, body, token)
	if err != nil {
		return r.Status, err
	}
	if err := json.Unmarshal(r.Raw, out); err != nil {
		return r.Status, fmt.Errorf("%s %s: %d, not JSON: %q", method, url, r.Status, r.Raw)
	}
	return r.Status, nil
}

// HTTPSClient connects to addr whatever the URL says, verifies the server
// as name against roots, and opens a new connection for every request.
func HTTPSClient(addr, name string, roots *x509.CertPool) *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		},
		TLSClientConfig:   &tls.Config{ServerName: name, RootCAs: roots},
		ForceAttemptHTTP2: true,
		DisableKeepAlives: true,
	}}
}

// GetOK is a GET that must answer 200.
func GetOK(c *http.Client, url string) (*http.Response, error) {
	res, err := c.Get(url)
	if err != nil {
		return nil, err
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return res, fmt.Errorf("GET %s: %d", url, res.StatusCode)
	}
	return res, nil
}
