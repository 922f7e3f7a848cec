package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestParsePrefixes(t *testing.T) {
	got, err := ParsePrefixes([]string{"127.0.0.1/8", "fe80::1/10", "10.1.2.3/32"})
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("fe80::/10"), netip.MustParsePrefix("10.1.2.3/32")}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("ParsePrefixes = %v, want %v (masked)", got, want)
	}
	if _, err := ParsePrefixes([]string{"10.0.0.0/8", "10.0.0.300/8"}); err == nil || !strings.Contains(err.Error(), "10.0.0.300/8") {
		t.Errorf("bad CIDR: err = %v, want one naming it", err)
	}
	if got, err := ParsePrefixes(nil); err != nil || len(got) != 0 {
		t.Errorf("ParsePrefixes(nil) = %v, %v", got, err)
	}
}

func TestCheckAddr(t *testing.T) {
	operator, err := ParsePrefixes([]string{"10.0.0.0/8", "127.0.0.0/8", "203.0.113.0/24"})
	if err != nil {
		t.Fatal(err)
	}
	var (
		byDefault    = Policy{}
		withLoopback = Policy{AllowLoopback: true}
		shared       = Policy{BlockPrivate: true}
		operators    = Policy{Blocked: operator}
		operatorsLB  = Policy{Blocked: operator, AllowLoopback: true}
	)
	for _, tt := range []struct {
		policy  Policy
		addr    string
		network string // "" = allowed
	}{
		// The defaults: loopback, unspecified, link-local and metadata.
		{byDefault, "127.0.0.1:80", "127.0.0.0/8"},
		{byDefault, "127.0.0.2:80", "127.0.0.0/8"},
		{byDefault, "127.9.9.9:443", "127.0.0.0/8"},
		{byDefault, "[::1]:80", "::1/128"},
		{byDefault, "0.0.0.0:80", "0.0.0.0/8"},
		{byDefault, "[::]:80", "::/128"},
		{byDefault, "[::ffff:127.0.0.1]:80", "127.0.0.0/8"}, // IPv4-mapped
		{byDefault, "[::ffff:0.0.0.0]:80", "0.0.0.0/8"},
		{byDefault, "169.254.169.254:80", "169.254.0.0/16"}, // cloud metadata
		{byDefault, "[::ffff:169.254.169.254]:80", "169.254.0.0/16"},
		{byDefault, "[fd00:ec2::254]:80", "fd00:ec2::254/128"},
		{byDefault, "100.100.100.200:80", "100.100.100.200/32"},
		{byDefault, "[fe80::1%eth0]:80", "fe80::/10"},
		{byDefault, "[64:ff9b::7f00:1]:80", "127.0.0.0/8"}, // NAT64 of 127.0.0.1
		{byDefault, "[64:ff9b::a9fe:a9fe]:80", "169.254.0.0/16"},
		{byDefault, "[2002:7f00:1::1]:80", "127.0.0.0/8"}, // 6to4 of 127.0.0.1
		{byDefault, "[2002:a9fe:a9fe::]:80", "169.254.0.0/16"},
		{byDefault, "[::127.0.0.1]:80", "127.0.0.0/8"}, // IPv4-compatible
		{byDefault, "[::0.0.0.2]:80", "0.0.0.0/8"},
		// Private ranges and public addresses stay open by default.
		{byDefault, "10.0.0.1:80", ""},
		{byDefault, "172.16.5.4:80", ""},
		{byDefault, "192.168.1.10:80", ""},
		{byDefault, "100.64.0.1:80", ""},
		{byDefault, "[fd12:3456::1]:80", ""},
		{byDefault, "93.184.216.34:443", ""},
		{byDefault, "[2001:db8::1]:443", ""},
		{byDefault, "[64:ff9b::5db8:d822]:443", ""}, // NAT64 of a public address
		{byDefault, "[2002:5db8:d822::1]:443", ""},
		// allow_loopback lifts loopback only.
		{withLoopback, "127.0.0.1:80", ""},
		{withLoopback, "127.0.0.2:80", ""},
		{withLoopback, "[::1]:80", ""},
		{withLoopback, "[::ffff:127.0.0.1]:80", ""},
		{withLoopback, "0.0.0.0:80", "0.0.0.0/8"},
		{withLoopback, "[::]:80", "::/128"},
		{withLoopback, "169.254.169.254:80", "169.254.0.0/16"},
		{withLoopback, "[fe80::1]:80", "fe80::/10"},
		// block_private adds the private ranges, in every form.
		{shared, "10.0.0.1:80", "10.0.0.0/8"},
		{shared, "172.31.255.1:80", "172.16.0.0/12"},
		{shared, "192.168.1.10:80", "192.168.0.0/16"},
		{shared, "100.64.0.1:80", "100.64.0.0/10"},
		{shared, "[fd12:3456::1]:80", "fc00::/7"},
		{shared, "[::ffff:192.168.1.10]:80", "192.168.0.0/16"},
		{shared, "[64:ff9b::c0a8:10a]:80", "192.168.0.0/16"},
		{shared, "[2002:a00:1::]:80", "10.0.0.0/8"},
		{shared, "127.0.0.1:80", "127.0.0.0/8"},
		{shared, "172.32.0.1:80", ""},
		{shared, "93.184.216.34:443", ""},
		// The operator's list adds and never re-opens.
		{operators, "10.1.2.3:80", "10.0.0.0/8"},
		{operators, "203.0.113.9:80", "203.0.113.0/24"},
		{operators, "[64:ff9b::cb00:7109]:80", "203.0.113.0/24"},
		{operators, "[::1]:80", "::1/128"},
		{operators, "169.254.169.254:80", "169.254.0.0/16"},
		{operators, "192.168.1.10:80", ""},
		{operatorsLB, "127.0.0.1:80", "127.0.0.0/8"}, // listed by the operator: allow_loopback does not lift it
		{operatorsLB, "[::1]:80", ""},
	} {
		err := tt.policy.checkAddr(tt.addr)
		var be *BlockedError
		switch {
		case tt.network == "" && err != nil:
			t.Errorf("%+v: checkAddr(%s) = %v, want allowed", tt.policy, tt.addr, err)
		case tt.network != "" && (!errors.As(err, &be) || be.Network.String() != tt.network):
			t.Errorf("%+v: checkAddr(%s) = %v, want blocked by %s", tt.policy, tt.addr, err, tt.network)
		case tt.network != "" && !strings.Contains(err.Error(), tt.network):
			t.Errorf("error %q does not name %s", err, tt.network)
		}
	}
	if err := byDefault.checkAddr("not-an-address:80"); err == nil {
		t.Error("checkAddr of a name, not an IP, passed")
	}
}

// receiver is an HTTP server on one loopback address that counts requests.
type receiver struct {
	*httptest.Server
	hits atomic.Int32
}

// newReceiver listens on addr ("127.0.0.1:0", "[::1]:0"...); it skips the
// test where the platform cannot listen there.
func newReceiver(t *testing.T, addr string) *receiver {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s here: %v", addr, err)
	}
	rc := &receiver{}
	rc.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		rc.hits.Add(1)
		w.WriteHeader(204)
	}))
	rc.Listener.Close()
	rc.Listener = ln
	rc.Start()
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) port() int { return rc.Listener.Addr().(*net.TCPAddr).Port }

// post makes one request through a client of policy.
func post(policy Policy, url string) (*http.Response, error) {
	c := policy.Client(2 * time.Second)
	defer c.CloseIdleConnections()
	res, err := c.Post(url, "application/json", strings.NewReader("{}"))
	if err == nil {
		res.Body.Close()
	}
	return res, err
}

// TestDefaultRefusesLoopback dials, by every spelling of this host, real
// listeners on loopback: the default policy refuses them at dial time and
// they receive nothing.
func TestDefaultRefusesLoopback(t *testing.T) {
	type target struct {
		url string
		rc  *receiver
	}
	v4 := newReceiver(t, "127.0.0.1:0")
	targets := []target{
		{fmt.Sprintf("http://127.0.0.1:%d/", v4.port()), v4},
		{fmt.Sprintf("http://localhost:%d/", v4.port()), v4},
		{fmt.Sprintf("http://[::ffff:127.0.0.1]:%d/", v4.port()), v4},
		{fmt.Sprintf("http://0.0.0.0:%d/", v4.port()), v4},
	}
	if ln, err := net.Listen("tcp", "127.0.0.2:0"); err == nil {
		ln.Close()
		v4b := newReceiver(t, "127.0.0.2:0")
		targets = append(targets, target{fmt.Sprintf("http://127.0.0.2:%d/", v4b.port()), v4b})
	}
	if ln, err := net.Listen("tcp", "[::1]:0"); err == nil {
		ln.Close()
		v6 := newReceiver(t, "[::1]:0")
		targets = append(targets, target{fmt.Sprintf("http://[::1]:%d/", v6.port()), v6},
			target{fmt.Sprintf("http://[::]:%d/", v6.port()), v6})
	}
	for _, tt := range targets {
		t.Run(tt.url, func(t *testing.T) {
			// Without the guard, the address reaches the listener.
			u, _ := url.Parse(tt.url)
			if c, err := net.DialTimeout("tcp", u.Host, 2*time.Second); err != nil {
				t.Logf("this platform cannot reach %s at all: %v", u.Host, err)
			} else {
				c.Close()
			}
			if _, err := post(Policy{}, tt.url); !IsBlocked(err) {
				t.Errorf("default policy: %v, want a refusal at dial time", err)
			}
			if got := tt.rc.hits.Load(); got != 0 {
				t.Errorf("receiver got %d requests, want 0", got)
			}
		})
	}
}

// TestTransport dials a real listener on 127.0.0.1 through a policy's
// Transport.
func TestTransport(t *testing.T) {
	rc := newReceiver(t, "127.0.0.1:0")
	operator, _ := ParsePrefixes([]string{"127.0.0.0/8"})

	t.Run("allowed", func(t *testing.T) {
		res, err := post(Policy{AllowLoopback: true}, rc.URL)
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != 204 {
			t.Errorf("status %d", res.StatusCode)
		}
	})
	t.Run("listed by the operator", func(t *testing.T) {
		_, err := post(Policy{Blocked: operator, AllowLoopback: true}, rc.URL)
		var be *BlockedError
		if !errors.As(err, &be) || be.Rule != "delivery.blocked_networks" {
			t.Fatalf("err = %v, want a BlockedError of the operator's list", err)
		}
	})
	t.Run("IPv4-mapped IPv6", func(t *testing.T) {
		mapped := fmt.Sprintf("[::ffff:127.0.0.1]:%d", rc.port())
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		// Only meaningful where the platform can dial that address at all.
		c, err := Policy{AllowLoopback: true}.Transport(5*time.Second).DialContext(ctx, "tcp", mapped)
		if err != nil {
			t.Skipf("this platform cannot dial %s: %v", mapped, err)
		}
		c.Close()
		_, err = Policy{}.Transport(5*time.Second).DialContext(ctx, "tcp", mapped)
		var be *BlockedError
		if !errors.As(err, &be) || be.Network.String() != "127.0.0.0/8" {
			t.Errorf("dial %s: %v, want blocked by 127.0.0.0/8", mapped, err)
		}
	})
	t.Run("zoned link-local", func(t *testing.T) {
		// A zone in the URL must not get around fe80::/10.
		if runtime.GOOS != "linux" {
			t.Skip("uses the Linux loopback interface name")
		}
		_, err := post(Policy{AllowLoopback: true}, fmt.Sprintf("http://[fe80::1%%25lo]:%d/", rc.port()))
		var be *BlockedError
		if !errors.As(err, &be) || be.Network.String() != "fe80::/10" {
			t.Errorf("POST to a zoned link-local address: %v, want blocked by fe80::/10", err)
		}
	})
	t.Run("redirect", func(t *testing.T) {
		redirector := httptest.NewServer(http.RedirectHandler(rc.URL+"/elsewhere", http.StatusFound))
		defer redirector.Close()
		res, err := post(Policy{AllowLoopback: true}, redirector.URL)
		if err != nil || res.StatusCode != http.StatusFound {
			t.Errorf("POST to a redirect: %v %v, want the 302 itself", res, err)
		}
	})
	if got := rc.hits.Load(); got != 1 {
		t.Errorf("receiver got %d requests, want 1 (only the allowed one)", got)
	}
}
