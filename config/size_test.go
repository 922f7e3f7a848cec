package config

import "testing"

// TestParseSize: units count in 1024s, with or without B or iB; anything
// else is refused.
func TestParseSize(t *testing.T) {
	for raw, want := range map[string]Size{"15MB": 15 << 20, "15M": 15 << 20, "15MiB": 15 << 20, "512kb": 512 << 10,
		"1GB": 1 << 30, "100": 100, "7B": 7, " 2 MB ": 2 << 20} {
		if got, err := ParseSize(raw); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", raw, got, err, want)
		}
	}
	for _, raw := range []string{"", "MB", "-1MB", "1.5MB", "15 apples", "99999999999GB"} {
		if got, err := ParseSize(raw); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", raw, got)
		}
	}
	if b, _ := Size(15 << 20).MarshalText(); string(b) != "15MB" {
		t.Errorf("15 MiB marshals as %s", b)
	}
	env := map[string]string{"HERALD_ATTACHMENTS_MAX_FILE_SIZE": "2MB", "HERALD_PLANS_FREE_ATTACHMENT_QUOTA": "1GB"}
	cfg, err := Load("", func(k string) string { return env[k] })
	if err != nil || cfg.Attachments.MaxFileSize != 2<<20 || cfg.Plans.Limits("free").AttachmentQuota != 1<<30 {
		t.Errorf("sizes from the environment: %d, %d, %v", cfg.Attachments.MaxFileSize, cfg.Plans.Free.AttachmentQuota, err)
	}
}
