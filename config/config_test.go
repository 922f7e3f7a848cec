package config

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

// writeConfig writes body to a herald.toml in a fresh directory.
func writeConfig(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "herald.toml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// env returns a getenv reading from m.
func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// wantErr fails unless err is non-nil and contains every one of wants.
func wantErr(t *testing.T, err error, wants ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one containing %q", wants)
	}
	for _, w := range wants {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
}

func TestDefaults(t *testing.T) {
	cfg, err := Load("", nil)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if !reflect.DeepEqual(cfg, Default()) {
		t.Fatalf("Load(\"\") = %+v, want Default() %+v", cfg, Default())
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"listen", cfg.Listen, "127.0.0.1:8080"},
		{"base_url", cfg.BaseURL, "http://127.0.0.1:8080"},
		{"db path", cfg.DBPath(), filepath.Join("data", "herald.db")},
		{"default_plan", cfg.DefaultPlan, "free"},
		{"log_format", cfg.LogFormat, "text"},
		{"log_level", cfg.LogLevel, "info"},
		{"metrics", cfg.Metrics, true},
		{"synchronous", cfg.Database.Synchronous, "full"},
		{"session_ttl", cfg.Auth.SessionTTL.Duration, time.Hour},
		{"refresh_ttl", cfg.Auth.RefreshTTL.Duration, 720 * time.Hour},
		{"local_passwords", cfg.Auth.LocalPasswords, true},
		{"free limits", cfg.Plans.Limits("free"), Plan{SendPerMinute: 5, APIPerMinute: 60,
			MaxChannels: 50, MaxDevices: 20, MaxFolders: 50, MaxPins: 50, MaxStreams: 10, AttachmentQuota: 100 << 20}},
		{"pro limits", cfg.Plans.Limits("pro"), Plan{SendPerMinute: 200, APIPerMinute: 200,
			MaxChannels: 500, MaxDevices: 100, MaxFolders: 500, MaxPins: 500, MaxStreams: 50, AttachmentQuota: 1 << 30}},
		{"attachments", cfg.Attachments, Attachments{Enabled: true, MaxFileSize: 15 << 20, Fetch: true,
			FetchTimeout: Duration{10 * time.Second}, MaxInMemory: 4}},
		{"unknown plan limits", cfg.Plans.Limits("gold"), cfg.Plans.Limits("free")},
		{"response_ttl", cfg.Polling.ResponseTTL.Duration, 10 * time.Minute},
		{"workers", cfg.Delivery.Workers, 8},
		{"timeout", cfg.Delivery.Timeout.Duration, 10 * time.Second},
		{"backoff", [2]time.Duration{cfg.Delivery.BackoffBase.Duration, cfg.Delivery.BackoffMax.Duration}, [2]time.Duration{time.Minute, time.Hour}},
		{"max_attempts", cfg.Delivery.MaxAttempts, 8},
		{"blocked_networks", cfg.Delivery.BlockedNetworks, []string{}},
		{"allow_loopback", cfg.Delivery.AllowLoopback, false},
		{"block_private", cfg.Delivery.BlockPrivate, false},
		{"retention", cfg.Retention.Messages.Duration, 720 * time.Hour},
		{"trusted_proxies", cfg.TrustedProxies, []string{}},
		{"tls", cfg.TLS.Enabled(), false},
		{"acme_directory", cfg.TLS.ACMEDirectory, LetsEncrypt},
		{"acme cache", cfg.ACMECacheDir(), filepath.Join("data", "acme")},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestLoadFullFile(t *testing.T) {
	path := writeConfig(t, `
listen = "0.0.0.0:9000"
base_url = "https://herald.example.com/"
data_dir = "/var/lib/herald"
default_plan = "pro"
log_format = "json"
log_level = "debug"
metrics = false
trusted_proxies = ["10.0.0.0/8", "127.0.0.1"]
[tls]
acme_domains = ["Herald.Example.com."]
acme_email = "ops@example.com"
acme_directory = "https://127.0.0.1:14000/dir"
redirect_listen = ":80"
[database]
synchronous = "normal"
[auth]
session_ttl = "30m"
refresh_ttl = "48h"
local_passwords = false
[[auth.providers]]
name = "google"
issuer = "https://accounts.google.com"
client_id = "web-id"
client_secret = "s3cret"
extra_audiences = ["ios-id"]
[[auth.providers]]
name = "home_lab-1"
issuer = "https://auth.home.example.com/"
client_id = "herald"
scopes = ["openid", "groups"]
allow_signup = false
link_by_email = true
admin_claim = "groups"
admin_values = ["admins"]
[plans.free]
send_per_minute = 1
api_per_minute = 2
max_devices = 0
[plans.pro]
send_per_minute = 3
api_per_minute = 4
max_channels = 7
max_devices = 8
max_folders = 9
max_pins = 10
max_streams = 11
attachment_quota = "5MB"
[polling]
response_ttl = "1m"
[delivery]
workers = 2
timeout = "5s"
first_byte_timeout = "4s"
backoff_base = "2s"
backoff_max = "20s"
max_attempts = 3
blocked_networks = ["10.0.0.0/8"]
allow_loopback = true
block_private = true
[push]
workers = 2
max_attempts = 3
backoff_base = "1s"
backoff_max = "1m"

[push.apns]
key_file = "/k.p8"
key_id = "ABC"
team_id = "TEAM"
topic = "com.example.app"
production = true
host = "https://127.0.0.1:4443"
[push.fcm]
credentials_file = "/sa.json"
project_id = "proj"
endpoint = "http://127.0.0.1:1"
[push.webpush]
subject = "mailto:ops@example.com"
[subscriptions.apple]
bundle_id = "com.example.app"
pro_product_ids = ["pro.monthly"]
root_ca_file = "/root.pem"
[subscriptions.google]
package_name = "com.example.app"
pro_product_ids = ["pro"]
credentials_file = "/play.json"
endpoint = "http://127.0.0.1:2"
pubsub_audience = "https://herald.example.com/v1/subscriptions/google/webhook"
[retention]
messages = "24h"
[attachments]
enabled = false
max_file_size = "512KB"
fetch = false
fetch_timeout = "3s"
max_in_memory = 2
`)
	cfg, err := Load(path, nil)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := Config{
		Listen: "0.0.0.0:9000", BaseURL: "https://herald.example.com", DataDir: "/var/lib/herald",
		DefaultPlan: "pro", LogFormat: "json", LogLevel: "debug", Metrics: false,
		TrustedProxies: []string{"10.0.0.0/8", "127.0.0.1"},
		TLS: TLS{ACMEDomains: []string{"herald.example.com"}, ACMEEmail: "ops@example.com",
			ACMEDirectory: "https://127.0.0.1:14000/dir", RedirectListen: ":80"},
		Database: Database{Synchronous: "normal"},
		Auth: Auth{SessionTTL: Duration{30 * time.Minute}, RefreshTTL: Duration{48 * time.Hour}, Providers: []Provider{
			{Name: "google", Issuer: "https://accounts.google.com", ClientID: "web-id", ClientSecret: "s3cret",
				Scopes: []string{"openid", "email", "profile"}, ExtraAudiences: []string{"ios-id"}},
			{Name: "home_lab-1", Issuer: "https://auth.home.example.com/", ClientID: "herald", Scopes: []string{"openid", "groups"},
				AllowSignup: new(bool), LinkByEmail: true, AdminClaim: "groups", AdminValues: []string{"admins"}},
		}},
		Plans: Plans{Free: Plan{SendPerMinute: 1, APIPerMinute: 2, MaxChannels: 50, MaxFolders: 50, MaxPins: 50, MaxStreams: 10,
			AttachmentQuota: 100 << 20},
			Pro: Plan{SendPerMinute: 3, APIPerMinute: 4, MaxChannels: 7, MaxDevices: 8, MaxFolders: 9, MaxPins: 10, MaxStreams: 11,
				AttachmentQuota: 5 << 20}},
		Polling: Polling{ResponseTTL: Duration{time.Minute}},
		Delivery: Delivery{Workers: 2, Timeout: Duration{5 * time.Second}, FirstByte: Duration{4 * time.Second}, BackoffBase: Duration{2 * time.Second}, BackoffMax: Duration{20 * time.Second}, MaxAttempts: 3,
			BlockedNetworks: []string{"10.0.0.0/8"}, AllowLoopback: true, BlockPrivate: true},
		Push: Push{Workers: 2, MaxAttempts: 3, BackoffBase: Duration{time.Second}, BackoffMax: Duration{time.Minute},
			APNs:    APNs{KeyFile: "/k.p8", KeyID: "ABC", TeamID: "TEAM", Topic: "com.example.app", Production: true, Host: "https://127.0.0.1:4443"},
			FCM:     FCM{CredentialsFile: "/sa.json", ProjectID: "proj", Endpoint: "http://127.0.0.1:1"},
			WebPush: WebPush{Subject: "mailto:ops@example.com"},
		},
		Subscriptions: Subscriptions{
			Apple:  Apple{BundleID: "com.example.app", ProProductIDs: []string{"pro.monthly"}, RootCAFile: "/root.pem"},
			Google: Google{PackageName: "com.example.app", ProProductIDs: []string{"pro"}, CredentialsFile: "/play.json", Endpoint: "http://127.0.0.1:2", PubsubAudience: "https://herald.example.com/v1/subscriptions/google/webhook"},
		},
		Retention:   Retention{Messages: Duration{24 * time.Hour}},
		Attachments: Attachments{MaxFileSize: 512 << 10, FetchTimeout: Duration{3 * time.Second}, MaxInMemory: 2},
	}
	if !reflect.DeepEqual(cfg, want) {
		t.Fatalf("Load =\n%+v\nwant\n%+v", cfg, want)
	}
	// A cap set to 0 is the plan's built-in one.
	if got, want := cfg.Plans.Limits("free").MaxDevices, 20; got != want {
		t.Errorf("free max_devices = 0: Limits gives %d, want the default %d", got, want)
	}
	if got, want := cfg.Auth.Providers[0].SignupAllowed(), true; got != want {
		t.Errorf("google SignupAllowed = %v, want %v", got, want)
	}
	if got, want := cfg.Auth.Providers[1].SignupAllowed(), false; got != want {
		t.Errorf("homelab SignupAllowed = %v, want %v", got, want)
	}
}

func TestUnknownKeys(t *testing.T) {
	tests := []struct {
		name, body string
		wants      []string
	}{
		{"top level", "listen = \":1\"\nlisten_addr = \":2\"\n", []string{`line 2: unknown key "listen_addr"`}},
		{"in section", "[delivery]\nworkers = 2\n\nworkerz = 3\n", []string{`line 4: unknown key "delivery.workerz"`}},
		{"unknown table", "metrics = true\n[smtp]\nhost = \"x\"\nport = 25\n", []string{`line 2: unknown key "smtp"`}},
		{"dotted key", "delivery.retries = 3\n", []string{`line 1: unknown key "delivery.retries"`}},
		{"in provider", "[[auth.providers]]\nname = \"a\"\nissuer = \"https://a\"\nclient_id = \"x\"\nclient_sekret = \"y\"\n", []string{`line 5: unknown key "auth.providers.client_sekret"`}},
		{"wrong case", "[delivery]\nWorkers = 3\n", []string{`line 2: unknown key "delivery.Workers"`, `did you mean "delivery.workers"`}},
		{"parse error", "listen = \"a\"\nworkers = = 3\n", []string{"herald.toml", "line 2"}},
		// The toml lexer says line 0, 1, 3 and 3 for these four.
		{"backslash ends a one-line file", `"\`, []string{"herald.toml: toml: line 1:"}},
		{"backslash ends the file", "metrics = true\nlisten = \"\\", []string{"herald.toml: toml: line 2"}},
		{"backslash ends the last line", "metrics = true\nlisten = \"\\\n", []string{"herald.toml: toml: line 2"}},
		{"inline table left open", "metrics = true\nplans = {\n", []string{"herald.toml: toml: line 2"}},
		{"wrong type", "[delivery]\nworkers = \"eight\"\n", []string{"herald.toml", "line 2", "delivery.workers"}},
		{"bad duration", "[polling]\nresponse_ttl = \"ten minutes\"\n", []string{"line 2", "polling.response_ttl", "invalid duration"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeConfig(t, tt.body)
			_, err := Load(path, nil)
			wantErr(t, err, append(tt.wants, path)...)
		})
	}
}

func TestBadValues(t *testing.T) {
	provider := func(extra string) string {
		return "[[auth.providers]]\nname = \"ok\"\nissuer = \"https://id.example.com\"\nclient_id = \"c\"\n" + extra
	}
	const https = "base_url = \"https://a.example.com\"\n\n"
	tests := []struct {
		name, body string
		wants      []string
	}{
		{"base_url unparsable", "base_url = \"::nope\"\n", []string{"line 1: base_url"}},
		{"base_url relative", "base_url = \"/herald\"\n", []string{"base_url", "absolute"}},
		{"base_url ftp", "base_url = \"ftp://x\"\n", []string{"base_url"}},
		{"listen", "listen = \"8080\"\n", []string{"listen"}},
		{"data_dir", "data_dir = \"\"\n", []string{"data_dir"}},
		{"default_plan", "default_plan = \"gold\"\n", []string{"default_plan", `"gold"`}},
		{"log_format", "log_format = \"xml\"\n", []string{"log_format"}},
		{"log_level", "log_level = \"verbose\"\n", []string{"log_level"}},
		{"synchronous", "[database]\nsynchronous = \"off\"\n", []string{"line 2: database.synchronous"}},
		{"database url not postgres", "[database]\nurl = \"mysql://u:p@h/db\"\n", []string{"line 2: database.url", "PostgreSQL"}},
		{"zero session_ttl", "[auth]\nsession_ttl = \"0s\"\n", []string{"auth.session_ttl", "positive"}},
		{"negative refresh_ttl", "[auth]\nrefresh_ttl = \"-1h\"\n", []string{"auth.refresh_ttl"}},
		{"zero send limit", "[plans.free]\nsend_per_minute = 0\n", []string{"plans.free.send_per_minute"}},
		{"negative api limit", "[plans.pro]\napi_per_minute = -5\n", []string{"plans.pro.api_per_minute"}},
		{"negative cap", "[plans.free]\nmax_channels = 3\nmax_streams = -1\n", []string{"line 3: plans.free.max_streams", "0 for the built-in default"}},
		{"response_ttl", "[polling]\nresponse_ttl = \"0s\"\n", []string{"polling.response_ttl"}},
		{"bad size", "[attachments]\nmax_file_size = \"15 apples\"\n", []string{"invalid size", "15MB"}},
		{"zero file size", "[attachments]\nmax_file_size = \"0\"\n", []string{"attachments.max_file_size"}},
		{"no room in memory", "[attachments]\nmax_in_memory = 0\n", []string{"attachments.max_in_memory"}},
		{"workers", "[delivery]\nworkers = 0\n", []string{"delivery.workers"}},
		{"max_attempts", "[delivery]\nmax_attempts = 0\n", []string{"delivery.max_attempts"}},
		{"timeout", "[delivery]\ntimeout = \"-1s\"\n", []string{"delivery.timeout"}},
		{"first_byte_timeout", "[delivery]\nfirst_byte_timeout = \"0s\"\n", []string{"line 2: delivery.first_byte_timeout", "positive"}},
		{"backoff_max below base", "[delivery]\nbackoff_base = \"1h\"\nbackoff_max = \"1m\"\n", []string{"line 3: delivery.backoff_max"}},
		{"bad cidr", "[delivery]\nblocked_networks = [\"10.0.0.0/8\", \"10.0.0.300/8\"]\n", []string{"delivery.blocked_networks", "10.0.0.300/8"}},
		{"retention", "[retention]\nmessages = \"0s\"\n", []string{"retention.messages"}},
		{"provider without name", "[[auth.providers]]\nissuer = \"https://a\"\nclient_id = \"x\"\n", []string{"auth.providers[0].name", "empty"}},
		{"provider bad name", provider("") + "[[auth.providers]]\nname = \"Google\"\nissuer = \"https://a\"\nclient_id = \"x\"\n", []string{`auth.providers[1] ("Google").name`}},
		{"provider reserved name", "[[auth.providers]]\nname = \"logout-all\"\nissuer = \"https://a\"\nclient_id = \"x\"\n", []string{"reserved"}},
		{"provider duplicate", provider("") + provider(""), []string{`auth.providers[1] ("ok").name`, "duplicate"}},
		{"provider without issuer", "[[auth.providers]]\nname = \"a\"\nclient_id = \"x\"\n", []string{"auth.providers[0] (\"a\").issuer", "required"}},
		{"provider without client_id", "[[auth.providers]]\nname = \"a\"\nissuer = \"https://a\"\n", []string{"client_id", "required"}},
		{"provider scopes", provider("scopes = [\"email\"]\n"), []string{"scopes", "openid"}},
		{"provider admin claim alone", provider("admin_claim = \"groups\"\n"), []string{"admin_claim"}},
		{"apns half", "[push.apns]\nkey_file = \"/k.p8\"\n", []string{"push.apns.key_id", "push.apns.team_id", "push.apns.topic"}},
		{"fcm endpoint", "[push.fcm]\ncredentials_file = \"/sa.json\"\nendpoint = \"localhost\"\n", []string{"push.fcm.endpoint"}},
		{"webpush subject", "[push.webpush]\nsubject = \"ops@example.com\"\n", []string{"push.webpush.subject"}},
		{"push workers", "[push]\nworkers = 0\nbackoff_base = \"1m\"\nbackoff_max = \"1s\"\n", []string{"push.workers", "push.backoff_max"}},
		{"google endpoint", "[subscriptions.google]\nendpoint = \"nope\"\n", []string{"subscriptions.google.endpoint"}},
		{"trusted_proxies", "trusted_proxies = [\"10.0.0.0/33\"]\n", []string{"line 1: trusted_proxies", "10.0.0.0/33"}},
		{"tls key alone", https + "[tls]\nkey_file = \"/k.pem\"\n", []string{"tls.cert_file", "together"}},
		{"tls files and acme", https + "[tls]\ncert_file = \"/c.pem\"\nkey_file = \"/k.pem\"\nacme_domains = [\"a.example.com\"]\n", []string{"line 6: tls.acme_domains", "not both"}},
		{"acme wildcard", https + "[tls]\nacme_domains = [\"*.example.com\"]\n", []string{"tls.acme_domains", "*.example.com"}},
		{"acme ip", https + "[tls]\nacme_domains = [\"192.0.2.1\"]\n", []string{"tls.acme_domains", "192.0.2.1"}},
		{"acme one label", https + "[tls]\nacme_domains = [\"herald\"]\n", []string{"tls.acme_domains"}},
		{"acme directory", https + "[tls]\nacme_domains = [\"a.example.com\"]\nacme_directory = \"x\"\n", []string{"tls.acme_directory"}},
		{"redirect without tls", "[tls]\nredirect_listen = \":80\"\n", []string{"line 2: tls.redirect_listen", "needs"}},
		{"redirect_listen", https + "[tls]\nacme_domains = [\"a.example.com\"]\nredirect_listen = \"80\"\n", []string{"tls.redirect_listen", "host:port"}},
		{"tls with http base_url", "base_url = \"http://a.example.com\"\n[tls]\nacme_domains = [\"a.example.com\"]\n", []string{"base_url", "https://"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(writeConfig(t, tt.body), nil)
			wantErr(t, err, tt.wants...)
		})
	}
}

// TestExampleFile keeps config.example.toml honest: as shipped it sets every
// key to its default, and its commented-out providers are valid once uncommented.
func TestExampleFile(t *testing.T) {
	const path = "../config.example.toml"
	cfg, err := Load(path, nil)
	if err != nil {
		t.Fatalf("Load(%s): %v", path, err)
	}
	if !reflect.DeepEqual(cfg, Default()) {
		t.Fatalf("example differs from Default():\n got %+v\nwant %+v", cfg, Default())
	}

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// "# name = ..." and "# [[auth.providers]]" lines, not the indented key list.
	commented := regexp.MustCompile(`(?m)^# (\[\[auth\.providers\]\]|[a-z_]+ +=)`)
	uncommented := commented.ReplaceAllString(string(data), "$1")
	cfg, err = Load(writeConfig(t, uncommented), nil)
	if err != nil {
		t.Fatalf("example with providers uncommented: %v", err)
	}
	var names []string
	for _, p := range cfg.Auth.Providers {
		names = append(names, p.Name)
	}
	if got, want := strings.Join(names, ","), "google,apple,authelia"; got != want {
		t.Errorf("providers = %q, want %q", got, want)
	}
}
