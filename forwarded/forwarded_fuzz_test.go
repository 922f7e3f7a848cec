package forwarded

import (
	"net/http/httptest"
	"testing"
)

// FuzzClient: whatever the headers say, Client does not panic, and the
// client is the trusted peer or an address that one of the hops names.
func FuzzClient(f *testing.F) {
	f.Add("198.51.100.1, 10.0.0.5", "https", `for="[2001:db8::1]:4711";proto=https`)
	f.Add("", "", `for=_hidden, for=10.0.0.5;proto="http"`)
	f.Add("[::1]:80,,", "http,https", `for="\"";by=x, ;;`)
	p, _ := Parse([]string{"127.0.0.1", "10.0.0.0/8"})
	f.Fuzz(func(t *testing.T, xff, xfp, fwd string) {
		req := httptest.NewRequest("GET", "/", nil)
		req.RemoteAddr = "127.0.0.1:9"
		req.Header["X-Forwarded-For"] = []string{xff}
		req.Header["X-Forwarded-Proto"] = []string{xfp}
		req.Header["Forwarded"] = []string{fwd}
		client, scheme, ok := p.Client(req)
		if !ok || !client.IsValid() {
			t.Fatalf("Client = %v, %v from a trusted peer", client, ok)
		}
		if scheme != "" && scheme != "http" && scheme != "https" {
			t.Fatalf("scheme = %q", scheme)
		}
		if client.String() != "127.0.0.1" {
			hops, _ := xForwarded(req.Header)
			if len(hops) == 0 {
				hops, _ = rfc7239(req.Header)
			}
			found := false
			for _, h := range hops {
				if a, ok := parseHop(h); ok && a == client {
					found = true
				}
			}
			if !found {
				t.Fatalf("client %s is neither the peer nor a hop of %q / %q", client, xff, fwd)
			}
		}
	})
}
