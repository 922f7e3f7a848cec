package config

import "testing"

func TestBaseURLFollowsListen(t *testing.T) {
	for _, c := range []struct {
		name, listen, baseURL string
		tls                   TLS
		want                  string
		unreachable           bool
	}{
		{name: "default", listen: "127.0.0.1:8080", want: "http://127.0.0.1:8080"},
		{name: "other port", listen: "127.0.0.1:19201", want: "http://127.0.0.1:19201"},
		{name: "named host", listen: "nas.lan:9000", want: "http://nas.lan:9000"},
		{name: "port 80", listen: "10.0.0.5:80", want: "http://10.0.0.5"},
		{name: "ipv6", listen: "[::1]:8080", want: "http://[::1]:8080"},
		{name: "every interface", listen: "0.0.0.0:8080", want: "http://127.0.0.1:8080", unreachable: true},
		{name: "no host", listen: ":8080", want: "http://127.0.0.1:8080", unreachable: true},
		{name: "every ipv6 interface", listen: "[::]:8080", want: "http://127.0.0.1:8080", unreachable: true},
		{name: "tls files", listen: "0.0.0.0:443", tls: TLS{CertFile: "c.pem", KeyFile: "k.pem"}, want: "https://127.0.0.1", unreachable: true},
		{name: "acme", listen: ":443", tls: TLS{ACMEDomains: []string{"herald.example.com", "b.example.com"}}, want: "https://herald.example.com"},
		{name: "set by hand", listen: "0.0.0.0:8080", baseURL: "https://herald.example.com", want: "https://herald.example.com"},
		{name: "set by hand to loopback", listen: ":8080", baseURL: "http://localhost:8080", want: "http://localhost:8080", unreachable: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := map[string]string{"HERALD_LISTEN": c.listen, "HERALD_BASE_URL": c.baseURL}
			if len(c.tls.ACMEDomains) > 0 {
				env["HERALD_TLS_ACME_DOMAINS"] = c.tls.ACMEDomains[0] + "," + c.tls.ACMEDomains[1]
			}
			if c.tls.CertFile != "" {
				env["HERALD_TLS_CERT_FILE"], env["HERALD_TLS_KEY_FILE"] = c.tls.CertFile, c.tls.KeyFile
			}
			cfg, err := Load("", func(k string) string { return env[k] })
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if got := cfg.BaseURL; got != c.want {
				t.Errorf("base_url = %q, want %q", got, c.want)
			}
			if got := cfg.UnreachableBaseURL(); got != c.unreachable {
				t.Errorf("UnreachableBaseURL() = %v, want %v", got, c.unreachable)
			}
		})
	}
}

// A base_url in the file wins over the one listen would give, and a
// listen in the file moves the default base_url with it.
func TestBaseURLFromFile(t *testing.T) {
	cfg, err := Load(writeConfig(t, "listen = \"127.0.0.1:9300\"\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cfg.BaseURL, "http://127.0.0.1:9300"; got != want {
		t.Errorf("base_url = %q, want %q", got, want)
	}
	cfg, err = Load(writeConfig(t, "listen = \"127.0.0.1:9300\"\nbase_url = \"https://h.example.com/\"\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cfg.BaseURL, "https://h.example.com"; got != want {
		t.Errorf("base_url = %q, want %q", got, want)
	}
	if _, err := Load(writeConfig(t, "listen = \"nonsense\"\n"), nil); err == nil {
		t.Error("a bad listen loaded")
	}
}
