package forwarded

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

func mustParse(t *testing.T, list ...string) Proxies {
	t.Helper()
	p, err := Parse(list)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParse(t *testing.T) {
	p := mustParse(t, "10.0.0.0/8", "192.0.2.7", "2001:db8::/32", "10.1.2.3/8")
	for addr, want := range map[string]bool{
		"10.200.1.1": true, "192.0.2.7": true, "192.0.2.8": false, "2001:db8::1": true,
		"2001:db9::1": false, "::ffff:10.0.0.1": true, "127.0.0.1": false,
	} {
		req := httptest.NewRequest("GET", "/", nil)
		req.RemoteAddr = net.JoinHostPort(addr, "1234")
		if _, _, got := p.Client(req); got != want {
			t.Errorf("peer %s trusted = %v, want %v", addr, got, want)
		}
	}
	for _, bad := range []string{"10.0.0.0/33", "example.com", ""} {
		if _, err := Parse([]string{bad}); err == nil {
			t.Errorf("Parse(%q) = nil error, want one", bad)
		}
	}
}

func TestClient(t *testing.T) {
	p := mustParse(t, "127.0.0.1", "10.0.0.0/8", "fd00::/8")
	tests := []struct {
		name       string
		peer       string
		headers    map[string][]string
		want       string // "" = not trusted, headers ignored
		wantScheme string
	}{
		{"untrusted peer with headers", "203.0.113.9:4000",
			map[string][]string{"X-Forwarded-For": {"198.51.100.1"}, "X-Forwarded-Proto": {"https"}}, "", ""},
		{"trusted peer, no headers", "127.0.0.1:4000", nil, "127.0.0.1", ""},
		{"trusted peer, only X-Forwarded-Proto", "127.0.0.1:4000",
			map[string][]string{"X-Forwarded-Proto": {"https"}}, "127.0.0.1", "https"},
		{"peer without a port", "127.0.0.1",
			map[string][]string{"X-Forwarded-For": {"198.51.100.1"}}, "198.51.100.1", ""},
		{"one hop", "127.0.0.1:4000",
			map[string][]string{"X-Forwarded-For": {"198.51.100.1"}, "X-Forwarded-Proto": {"https"}}, "198.51.100.1", "https"},
		{"forged hops left of the real client", "127.0.0.1:4000",
			map[string][]string{"X-Forwarded-For": {"1.1.1.1, 10.9.9.9, 198.51.100.1"}}, "198.51.100.1", ""},
		{"chain of trusted proxies", "127.0.0.1:4000",
			map[string][]string{"X-Forwarded-For": {"198.51.100.1, 10.0.0.5", "10.0.0.6"}}, "198.51.100.1", ""},
		{"every hop trusted", "127.0.0.1:4000",
			map[string][]string{"X-Forwarded-For": {"10.0.0.4, 10.0.0.5"}}, "10.0.0.4", ""},
		{"garbage hop ends the walk", "127.0.0.1:4000",
			map[string][]string{"X-Forwarded-For": {"198.51.100.1, nonsense, 10.0.0.5"}}, "10.0.0.5", ""},
		{"hop with port, IPv6 in brackets", "127.0.0.1:4000",
			map[string][]string{"X-Forwarded-For": {"[2001:db8::7]:5555, 198.51.100.2:80"}}, "198.51.100.2", ""},
		{"IPv6 peer and hop", "[fd00::1]:4000",
			map[string][]string{"X-Forwarded-For": {"2001:db8::7"}}, "2001:db8::7", ""},
		{"X-Forwarded-Proto list matching hops", "127.0.0.1:4000",
			map[string][]string{"X-Forwarded-For": {"198.51.100.1, 10.0.0.5"}, "X-Forwarded-Proto": {"https, http"}}, "198.51.100.1", "https"},
		{"bad proto ignored", "127.0.0.1:4000",
			map[string][]string{"X-Forwarded-For": {"198.51.100.1"}, "X-Forwarded-Proto": {"gopher"}}, "198.51.100.1", ""},
		{"Forwarded", "127.0.0.1:4000",
			map[string][]string{"Forwarded": {`for=1.1.1.1;proto=http, for="198.51.100.1:4711";proto=https;by=10.0.0.5`}}, "198.51.100.1", "https"},
		{"Forwarded IPv6, quoted, two lines", "127.0.0.1:4000",
			map[string][]string{"Forwarded": {`for="[2001:db8:cafe::17]:4711";proto=HTTPS`, "For=10.0.0.5;Proto=http"}}, "2001:db8:cafe::17", "https"},
		{"Forwarded obfuscated hop", "127.0.0.1:4000",
			map[string][]string{"Forwarded": {"for=_hidden, for=10.0.0.5"}}, "10.0.0.5", ""},
		{"Forwarded quoted comma", "127.0.0.1:4000",
			map[string][]string{"Forwarded": {`for=198.51.100.1;host="a,b"`}}, "198.51.100.1", ""},
		{"X-Forwarded-For wins over Forwarded", "127.0.0.1:4000",
			map[string][]string{"X-Forwarded-For": {"198.51.100.1"}, "Forwarded": {"for=1.1.1.1"}}, "198.51.100.1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest("GET", "/", nil)
			req.RemoteAddr = tt.peer
			for k, vs := range tt.headers {
				req.Header[http.CanonicalHeaderKey(k)] = vs
			}
			client, scheme, ok := p.Client(req)
			if tt.want == "" {
				if ok {
					t.Fatalf("Client = %s, %q, true; want the headers ignored", client, scheme)
				}
				return
			}
			if !ok {
				t.Fatal("Client ok = false, want true")
			}
			if got := client.String(); got != tt.want {
				t.Errorf("client = %s, want %s", got, tt.want)
			}
			if scheme != tt.wantScheme {
				t.Errorf("scheme = %q, want %q", scheme, tt.wantScheme)
			}
		})
	}
}

// TestHandler runs a real server: the handler behind Handler sees the
// client's address in RemoteAddr, and HTTPS as the proxy reported it.
func TestHandler(t *testing.T) {
	var seen struct {
		remote string
		https  bool
	}
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.remote, seen.https = r.RemoteAddr, HTTPS(r)
	})
	get := func(t *testing.T, url string, h map[string]string) {
		t.Helper()
		req, _ := http.NewRequest("GET", url, nil)
		for k, v := range h {
			req.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}

	trusting := httptest.NewServer(mustParse(t, "127.0.0.0/8").Handler(echo))
	defer trusting.Close()
	get(t, trusting.URL, map[string]string{"X-Forwarded-For": "198.51.100.1", "X-Forwarded-Proto": "https"})
	if seen.remote != "198.51.100.1" || !seen.https {
		t.Errorf("through a trusted peer: RemoteAddr %q, HTTPS %v; want 198.51.100.1, true", seen.remote, seen.https)
	}

	distrusting := httptest.NewServer(mustParse(t, "10.0.0.0/8").Handler(echo))
	defer distrusting.Close()
	get(t, distrusting.URL, map[string]string{"X-Forwarded-For": "198.51.100.1", "X-Forwarded-Proto": "https"})
	if seen.remote == "198.51.100.1" || seen.https {
		t.Errorf("from an untrusted peer: RemoteAddr %q, HTTPS %v; want the peer, false", seen.remote, seen.https)
	}

	tlsSrv := httptest.NewTLSServer(mustParse(t).Handler(echo))
	defer tlsSrv.Close()
	req, _ := http.NewRequest("GET", tlsSrv.URL, nil)
	res, err := tlsSrv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if !seen.https {
		t.Error("over TLS with no proxies: HTTPS = false, want true")
	}
}
