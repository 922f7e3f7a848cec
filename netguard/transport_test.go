package netguard

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/testkit"
)

// TestTransportTimeouts: every stage of a guarded call has a bound of its
// own, a few seconds whatever the whole call's timeout, and none longer
// than it.
func TestTransportTimeouts(t *testing.T) {
	for _, tc := range []struct {
		limits                        Limits
		connect, handshake, firstByte time.Duration
	}{
		{Limits{Total: time.Second}, time.Second, time.Second, time.Second},
		{Limits{Total: 4 * time.Second}, 3 * time.Second, 4 * time.Second, 4 * time.Second},
		{Limits{Total: 10 * time.Second}, 3 * time.Second, 5 * time.Second, 5 * time.Second},
		{Limits{Total: time.Minute}, 3 * time.Second, 5 * time.Second, 5 * time.Second},
		{Limits{FirstByte: 20 * time.Second, Total: time.Minute}, 3 * time.Second, 5 * time.Second, 20 * time.Second},
		{Limits{Connect: time.Second, Handshake: 2 * time.Second, FirstByte: time.Minute, Total: 30 * time.Second},
			time.Second, 2 * time.Second, 30 * time.Second},
	} {
		tr := Policy{}.TransportWith(tc.limits)
		if d := (Policy{}).dialer(tc.limits.resolved().Connect); d.Timeout != tc.connect || d.KeepAlive != 30*time.Second {
			t.Errorf("%+v: dialer timeout %s keep-alive %s, want %s and 30s", tc.limits, d.Timeout, d.KeepAlive, tc.connect)
		}
		if tr.TLSHandshakeTimeout != tc.handshake || tr.ResponseHeaderTimeout != tc.firstByte ||
			tr.IdleConnTimeout != 90*time.Second || tr.ExpectContinueTimeout != time.Second {
			t.Errorf("%+v: TLS handshake %s, response header %s, idle %s, expect-continue %s; want %s, %s, 90s, 1s",
				tc.limits, tr.TLSHandshakeTimeout, tr.ResponseHeaderTimeout, tr.IdleConnTimeout, tr.ExpectContinueTimeout,
				tc.handshake, tc.firstByte)
		}
		if c := (Policy{}).ClientWith(tc.limits); c.Timeout != tc.limits.Total {
			t.Errorf("ClientWith(%+v).Timeout = %s", tc.limits, c.Timeout)
		}
	}
	if tr, want := (Policy{}).Transport(time.Minute), (Policy{}).TransportWith(Limits{Total: time.Minute}); tr.ResponseHeaderTimeout != want.ResponseHeaderTimeout ||
		tr.TLSHandshakeTimeout != want.TLSHandshakeTimeout {
		t.Errorf("Transport(1m) is not TransportWith(Limits{Total: 1m})")
	}
	if c := (Policy{}).Client(time.Minute); c.Timeout != time.Minute {
		t.Errorf("Client(1m).Timeout = %s", c.Timeout)
	}
}

// TestClientGivesUpOnTarpit: an address that accepts the connection and
// never answers holds a guarded call for its first-byte bound over HTTP,
// and its handshake bound over HTTPS, not for the whole call's timeout.
func TestClientGivesUpOnTarpit(t *testing.T) {
	tp := testkit.NewTarpit(t)
	c := Policy{AllowLoopback: true}.ClientWith(Limits{Handshake: 300 * time.Millisecond, FirstByte: 300 * time.Millisecond,
		Total: 20 * time.Second})
	for _, scheme := range []string{"http", "https"} {
		start := time.Now()
		resp, err := c.Post(scheme+"://"+tp.Addr()+"/hook", "application/json", strings.NewReader("{}"))
		took := time.Since(start)
		if err == nil {
			resp.Body.Close()
			t.Fatalf("%s: the tarpit answered %d", scheme, resp.StatusCode)
		}
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("%s: error %v, want a timeout", scheme, err)
		}
		if took > 2*time.Second {
			t.Errorf("%s: the call took %s, want about 300ms, far from the 20s timeout", scheme, took)
		}
	}
	if tp.Accepted() < 2 {
		t.Errorf("the tarpit took %d connections, want 2", tp.Accepted())
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
