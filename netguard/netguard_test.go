package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"runtime"
	"strings"
	"sync"
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
	blocked, err := ParsePrefixes([]string{"127.0.0.0/8", "169.254.0.0/16", "fe80::/10", "::1/128"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		addr    string
		network string // "" = allowed
	}{
		{"127.0.0.1:80", "127.0.0.0/8"},
		{"127.9.9.9:443", "127.0.0.0/8"},
		{"[::ffff:127.0.0.1]:80", "127.0.0.0/8"}, // IPv4-mapped IPv6
		{"169.254.169.254:80", "169.254.0.0/16"}, // cloud metadata
		{"[::ffff:169.254.169.254]:80", "169.254.0.0/16"},
		{"[fe80::1%eth0]:80", "fe80::/10"},
		{"[::1]:80", "::1/128"},
		{"10.0.0.1:80", ""},
		{"93.184.216.34:443", ""},
		{"[2001:db8::1]:443", ""},
	} {
		err := Policy{Blocked: blocked}.checkAddr(tt.addr)
		var be *BlockedError
		switch {
		case tt.network == "" && err != nil:
			t.Errorf("checkAddr(%s) = %v, want allowed", tt.addr, err)
		case tt.network != "" && (!errors.As(err, &be) || be.Network.String() != tt.network):
			t.Errorf("checkAddr(%s) = %v, want blocked by %s", tt.addr, err, tt.network)
		case tt.network != "" && !strings.Contains(err.Error(), tt.network):
			t.Errorf("error %q does not name %s", err, tt.network)
		}
	}
	if err := (Policy{}).checkAddr("127.0.0.1:80"); err != nil {
		t.Errorf("no blocked networks: %v", err)
	}
}

// TestTransport dials a real listener on 127.0.0.1 through a policy's Transport.
func TestTransport(t *testing.T) {
	var mu sync.Mutex
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
		w.WriteHeader(204)
	}))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	loopback, _ := ParsePrefixes([]string{"127.0.0.0/8", "::1/128"})
	post := func(tr *http.Transport, url string) (*http.Response, error) {
		defer tr.CloseIdleConnections()
		return (&http.Client{Transport: tr}).Post(url, "application/json", strings.NewReader("{}"))
	}

	t.Run("allowed", func(t *testing.T) {
		res, err := post(Policy{}.Transport(5*time.Second), srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 204 {
			t.Errorf("status %d", res.StatusCode)
		}
	})
	for _, url := range []string{srv.URL, fmt.Sprintf("http://localhost:%d/", port)} {
		t.Run("blocked "+url, func(t *testing.T) {
			_, err := post(Policy{Blocked: loopback}.Transport(5*time.Second), url)
			var be *BlockedError
			if !errors.As(err, &be) {
				t.Fatalf("err = %v, want a BlockedError", err)
			}
			if !strings.Contains(err.Error(), "blocked network") {
				t.Errorf("error %q does not say why", err)
			}
		})
	}
	t.Run("IPv4-mapped IPv6", func(t *testing.T) {
		mapped := fmt.Sprintf("[::ffff:127.0.0.1]:%d", port)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		// Only meaningful where the platform can dial that address at all.
		c, err := Policy{}.Transport(5*time.Second).DialContext(ctx, "tcp", mapped)
		if err != nil {
			t.Skipf("this platform cannot dial %s: %v", mapped, err)
		}
		c.Close()
		tr := Policy{Blocked: loopback}.Transport(5 * time.Second)
		_, err = tr.DialContext(ctx, "tcp", mapped)
		var be *BlockedError
		if !errors.As(err, &be) || be.Network.String() != "127.0.0.0/8" {
			t.Errorf("dial %s: %v, want blocked by 127.0.0.0/8", mapped, err)
		}
		if _, err := post(tr, "http://"+mapped+"/"); !errors.As(err, &be) {
			t.Errorf("POST to %s: %v, want blocked", mapped, err)
		}
	})
	t.Run("zoned link-local", func(t *testing.T) {
		// fe80::/10 is in the default blocked_networks; a zone in the URL
		// must not get around it.
		if runtime.GOOS != "linux" {
			t.Skip("uses the Linux loopback interface name")
		}
		linkLocal, _ := ParsePrefixes([]string{"fe80::/10"})
		_, err := post(Policy{Blocked: linkLocal}.Transport(2*time.Second), fmt.Sprintf("http://[fe80::1%%25lo]:%d/", port))
		var be *BlockedError
		if !errors.As(err, &be) || be.Network.String() != "fe80::/10" {
			t.Errorf("POST to a zoned link-local address: %v, want blocked by fe80::/10", err)
		}
	})
	mu.Lock()
	defer mu.Unlock()
	if hits != 1 {
		t.Errorf("receiver got %d requests, want 1 (only the allowed one)", hits)
	}
}
