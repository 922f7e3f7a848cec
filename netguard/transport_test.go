package netguard

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"sync/atomic"
	"testing"
	"time"
)

// TestTransportTimeouts: every stage of a guarded call has a bound, and the
// connect and TLS stages stop at 10 s even under a longer attempt timeout.
func TestTransportTimeouts(t *testing.T) {
	for _, tc := range []struct {
		timeout, connect time.Duration
	}{
		{3 * time.Second, 3 * time.Second},
		{10 * time.Second, 10 * time.Second},
		{time.Minute, 10 * time.Second},
	} {
		d := Policy{}.dialer(tc.timeout)
		if d.Timeout != tc.connect || d.KeepAlive != 30*time.Second {
			t.Errorf("dialer(%s): timeout %s keep-alive %s, want %s and 30s", tc.timeout, d.Timeout, d.KeepAlive, tc.connect)
		}
		tr := Policy{}.Transport(tc.timeout)
		if tr.TLSHandshakeTimeout != tc.connect || tr.ResponseHeaderTimeout != tc.timeout ||
			tr.IdleConnTimeout != 90*time.Second || tr.ExpectContinueTimeout != time.Second {
			t.Errorf("Transport(%s): TLS handshake %s, response header %s, idle %s, expect-continue %s; want %s, %s, 90s, 1s",
				tc.timeout, tr.TLSHandshakeTimeout, tr.ResponseHeaderTimeout, tr.IdleConnTimeout, tr.ExpectContinueTimeout,
				tc.connect, tc.timeout)
		}
		if c := (Policy{}).Client(tc.timeout); c.Timeout != tc.timeout {
			t.Errorf("Client(%s).Timeout = %s", tc.timeout, c.Timeout)
		}
	}
}

// proxyChild marks the test binary run by TestTransportIgnoresProxy.
const proxyChild = "NETGUARD_PROXY_CHILD"

// TestTransportIgnoresProxy: with HTTP_PROXY set, a guarded call still
// dials the target itself, so a target in a blocked network is refused.
// Through a proxy it would be the proxy that connects, where the guard
// never sees the address. Go reads the proxy variables once per process, so
// the call runs in a child process started with them.
func TestTransportIgnoresProxy(t *testing.T) {
	if os.Getenv(proxyChild) != "" {
		blocked, _ := ParsePrefixes([]string{"192.0.2.0/24"})
		_, err := post(Policy{Blocked: blocked, AllowLoopback: true}, "http://192.0.2.10/hook")
		var be *BlockedError
		if !errors.As(err, &be) || be.Network.String() != "192.0.2.0/24" {
			t.Fatalf("POST to a blocked network with HTTP_PROXY set: %v, want refused by 192.0.2.0/24", err)
		}
		return
	}
	var proxied atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxied.Add(1) // a forward proxy would now connect to r.URL.Host
		w.WriteHeader(http.StatusOK)
	}))
	defer proxy.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestTransportIgnoresProxy$", "-test.count=1")
	cmd.Env = append(os.Environ(), proxyChild+"=1", "HTTP_PROXY="+proxy.URL, "http_proxy="+proxy.URL,
		"NO_PROXY=", "no_proxy=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("child: %v\n%s", err, out)
	}
	if n := proxied.Load(); n != 0 {
		t.Errorf("the proxy got %d requests, want 0", n)
	}
}

// TestLoopbackV6AllowedWhenLoopbackIs: ::1 is not read as the
// IPv4-compatible form of 0.0.0.1, which is always refused.
func TestLoopbackV6AllowedWhenLoopbackIs(t *testing.T) {
	for _, a := range []string{"::1", "127.0.0.1", "::ffff:127.0.0.1"} {
		if err := (Policy{AllowLoopback: true}).Check(netip.MustParseAddr(a)); err != nil {
			t.Errorf("Check(%s) with loopback allowed = %v, want nil", a, err)
		}
	}
	if err := (Policy{AllowLoopback: true}).Check(netip.IPv6Unspecified()); !IsBlocked(err) {
		t.Errorf("Check(::) = %v, want blocked", err)
	}
}
