package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/heraldhq/herald/config"
)

// TestContribFiles keeps contrib/ in step with the binary: the systemd
// unit's command line is one herald accepts, its hardening is there, and
// the environment both files set is a configuration Herald loads.
func TestContribFiles(t *testing.T) {
	unit, err := os.ReadFile("contrib/herald.service")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	var exec []string
	for _, line := range strings.Split(string(unit), "\n") {
		k, v, ok := strings.Cut(line, "=")
		switch {
		case !ok || strings.HasPrefix(line, "#"):
		case k == "ExecStart":
			exec = strings.Fields(v)
		case k == "Environment":
			name, value, _ := strings.Cut(v, "=")
			env[name] = value
		}
	}
	for _, want := range []string{"NoNewPrivileges=yes", "ProtectSystem=strict", "ProtectHome=yes", "PrivateTmp=yes",
		"CapabilityBoundingSet=\n", "SystemCallFilter=@system-service", "RestrictAddressFamilies=", "StateDirectory=herald", "User=herald"} {
		if !strings.Contains(string(unit), want) {
			t.Errorf("contrib/herald.service lacks %q", strings.TrimSpace(want))
		}
	}
	if len(exec) < 2 || !strings.HasSuffix(exec[0], "/herald") {
		t.Fatalf("ExecStart = %q", exec)
	}
	root := newRoot(strings.NewReader(""), os.Stdout, os.Stderr, os.Getenv)
	cmd, rest, err := root.Find(exec[1:])
	if err != nil || cmd.Name() != "serve" {
		t.Fatalf("ExecStart %q: command %v, %v", exec, cmd, err)
	}
	if err := cmd.ParseFlags(rest); err != nil {
		t.Errorf("ExecStart %q: %v", exec, err)
	}

	compose, err := os.ReadFile("contrib/docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`(?m)^\s+(HERALD_[A-Z_]+): "([^"]*)"`).FindAllStringSubmatch(string(compose), -1) {
		env[m[1]] = m[2]
	}
	if len(env) < 3 {
		t.Fatalf("found only %v in contrib/", env)
	}
	cfg, err := config.Load("", func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("contrib's environment %v does not load: %v", env, err)
	}
	if cfg.UnreachableBaseURL() {
		t.Errorf("contrib's base_url %s is one only the server itself can use", cfg.BaseURL)
	}
}
