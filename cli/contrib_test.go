package cli

import (
	"maps"
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
	unit, err := os.ReadFile("../contrib/herald.service")
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
	root := NewRoot(strings.NewReader(""), os.Stdout, os.Stderr, os.Getenv, Build{})
	cmd, rest, err := root.Find(exec[1:])
	if err != nil || cmd.Name() != "serve" {
		t.Fatalf("ExecStart %q: command %v, %v", exec, cmd, err)
	}
	if err := cmd.ParseFlags(rest); err != nil {
		t.Errorf("ExecStart %q: %v", exec, err)
	}

	for _, file := range []string{"../contrib/docker-compose.yml", "../contrib/docker-compose.replicas.yml"} {
		compose, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		composeEnv := maps.Clone(env)
		for _, m := range regexp.MustCompile(`(?m)^\s+(HERALD_[A-Z_]+): "([^"]*)"`).FindAllStringSubmatch(string(compose), -1) {
			// Compose fills ${VAR:?...} from the shell; any value will do here.
			composeEnv[m[1]] = regexp.MustCompile(`\$\{[^}]*\}`).ReplaceAllString(m[2], "secret")
		}
		if len(composeEnv) < 3 {
			t.Fatalf("found only %v in %s", composeEnv, file)
		}
		cfg, err := config.Load("", func(k string) string { return composeEnv[k] })
		if err != nil {
			t.Fatalf("%s's environment %v does not load: %v", file, composeEnv, err)
		}
		if cfg.UnreachableBaseURL() {
			t.Errorf("%s's base_url %s is one only the server itself can use", file, cfg.BaseURL)
		}
		if strings.Contains(file, "replicas") && !strings.HasPrefix(cfg.DatabaseDSN(), "postgres://") {
			t.Errorf("%s runs its replicas on %q, not PostgreSQL", file, cfg.DatabaseDSN())
		}
	}
}
