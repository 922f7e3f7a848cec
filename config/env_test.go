package config

import (
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func TestEnvOverrides(t *testing.T) {
	path := writeConfig(t, "listen = \"127.0.0.1:1\"\n[delivery]\nworkers = 3\n")
	cfg, err := Load(path, env(map[string]string{
		"HERALD_LISTEN":                               "0.0.0.0:8080",
		"HERALD_BASE_URL":                             "https://h.example.com/",
		"HERALD_DATA_DIR":                             "/data",
		"HERALD_DEFAULT_PLAN":                         "pro",
		"HERALD_METRICS":                              "false",
		"HERALD_DATABASE_SYNCHRONOUS":                 "normal",
		"HERALD_DATABASE_URL":                         "postgres://herald:s3cret@db:5432/herald",
		"HERALD_AUTH_SESSION_TTL":                     "2h",
		"HERALD_AUTH_LOCAL_PASSWORDS":                 "false",
		"HERALD_PLANS_FREE_SEND_PER_MINUTE":           "10",
		"HERALD_DELIVERY_WORKERS":                     "4",
		"HERALD_PUSH_APNS_KEY_FILE":                   "/k.p8",
		"HERALD_PUSH_APNS_KEY_ID":                     "K",
		"HERALD_PUSH_APNS_TEAM_ID":                    "T",
		"HERALD_PUSH_APNS_TOPIC":                      "com.example",
		"HERALD_DELIVERY_BLOCKED_NETWORKS":            " 10.0.0.0/8, fe80::/10 ,",
		"HERALD_DELIVERY_ALLOW_LOOPBACK":              "true",
		"HERALD_DELIVERY_BLOCK_PRIVATE":               "1",
		"HERALD_SUBSCRIPTIONS_GOOGLE_PUBSUB_AUDIENCE": "aud",
		"HERALD_TRUSTED_PROXIES":                      "10.0.0.0/8, 192.168.1.1",
		"HERALD_TLS_ACME_DOMAINS":                     "h.example.com",
		"HERALD_TLS_REDIRECT_LISTEN":                  ":80",
	}))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"listen", cfg.Listen, "0.0.0.0:8080"},
		{"base_url", cfg.BaseURL, "https://h.example.com"},
		{"db path", cfg.DBPath(), filepath.Join("/data", "herald.db")},
		{"default_plan", cfg.DefaultPlan, "pro"},
		{"metrics", cfg.Metrics, false},
		{"synchronous", cfg.Database.Synchronous, "normal"},
		{"database url", cfg.DatabaseDSN(), "postgres://herald:s3cret@db:5432/herald"},
		{"database name hides the password", cfg.DatabaseName(), "postgres://herald:xxxxx@db:5432/herald"},
		{"session_ttl", cfg.Auth.SessionTTL.Duration, 2 * time.Hour},
		{"local_passwords", cfg.Auth.LocalPasswords, false},
		{"free send", cfg.Plans.Free.SendPerMinute, 10},
		{"workers", cfg.Delivery.Workers, 4},
		{"key_file", cfg.Push.APNs.KeyFile, "/k.p8"},
		{"blocked", cfg.Delivery.BlockedNetworks, []string{"10.0.0.0/8", "fe80::/10"}},
		{"allow_loopback", cfg.Delivery.AllowLoopback, true},
		{"block_private", cfg.Delivery.BlockPrivate, true},
		{"pubsub", cfg.Subscriptions.Google.PubsubAudience, "aud"},
		{"untouched", cfg.Delivery.MaxAttempts, 8},
		{"trusted_proxies", cfg.TrustedProxies, []string{"10.0.0.0/8", "192.168.1.1"}},
		{"acme_domains", cfg.TLS.ACMEDomains, []string{"h.example.com"}},
		{"redirect_listen", cfg.TLS.RedirectListen, ":80"},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if got, want := EnvName("push.apns.key_file"), "HERALD_PUSH_APNS_KEY_FILE"; got != want {
		t.Errorf("EnvName = %q, want %q", got, want)
	}
}

func TestEnvBadValues(t *testing.T) {
	tests := []struct {
		name  string
		env   map[string]string
		wants []string
	}{
		{"int", map[string]string{"HERALD_DELIVERY_WORKERS": "many"}, []string{"HERALD_DELIVERY_WORKERS", "integer"}},
		{"bool", map[string]string{"HERALD_METRICS": "maybe"}, []string{"HERALD_METRICS", "boolean"}},
		{"allow_loopback", map[string]string{"HERALD_DELIVERY_ALLOW_LOOPBACK": "yes"}, []string{"HERALD_DELIVERY_ALLOW_LOOPBACK", "boolean"}},
		{"duration", map[string]string{"HERALD_AUTH_REFRESH_TTL": "30d"}, []string{"HERALD_AUTH_REFRESH_TTL", "duration"}},
		{"invalid value", map[string]string{"HERALD_DELIVERY_MAX_ATTEMPTS": "0"}, []string{"delivery.max_attempts (from HERALD_DELIVERY_MAX_ATTEMPTS)"}},
		{"cidr", map[string]string{"HERALD_DELIVERY_BLOCKED_NETWORKS": "10.0.0.1"}, []string{"HERALD_DELIVERY_BLOCKED_NETWORKS"}},
		{"providers", map[string]string{"HERALD_AUTH_PROVIDERS": "google"}, []string{"HERALD_AUTH_PROVIDERS", "config file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load("", env(tt.env))
			wantErr(t, err, tt.wants...)
		})
	}
}
