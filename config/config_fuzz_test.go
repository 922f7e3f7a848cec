package config

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// FuzzLoad loads fuzzed TOML files with an empty environment (its corpus
// holds config.example.toml without comments). An accepted
// config must pass validation again unchanged; every part of a refusal must
// say where: the file (with a line that exists) or the key.
func FuzzLoad(f *testing.F) {
	f.Add("listen = \"0.0.0.0:9000\"\nbase_url = \"https://herald.example.com/\"\n[delivery]\nworkers = 2\nblocked_networks = [\"10.0.0.0/8\"]\n")
	f.Add("[[auth.providers]]\nname = \"google\"\nissuer = \"https://accounts.google.com\"\nclient_id = \"web-id\"\n" +
		"[[auth.providers]]\nname = \"Google\"\nissuer = \"x\"\nscopes = [\"email\"]\nadmin_claim = \"groups\"\n")
	f.Add("[delivery]\nWorkers = 3\nbackoff_base = \"1h\"\nbackoff_max = \"1m\"\n[smtp]\nhost = \"x\"\n")
	f.Add("[push.apns]\nkey_file = \"/k.p8\"\n[polling]\nresponse_ttl = \"ten minutes\"\n")
	f.Add("\"a,b\" = 1\n\"\" = 2\nlisten = = 3\n")
	// One file for every input: a fresh directory per input would cost
	// more than loading it. A worker runs one input at a time.
	path := filepath.Join(f.TempDir(), "herald.toml")
	f.Fuzz(func(t *testing.T, data string) {
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(path, func(string) string { return "" })
		if err != nil {
			checkLocated(t, err, path, data)
			return
		}
		again := cfg
		again.Auth.Providers = slices.Clone(cfg.Auth.Providers)
		if err := again.Validate(); err != nil {
			t.Fatalf("an accepted config fails validation again: %v", err)
		}
		if !reflect.DeepEqual(again, cfg) {
			t.Fatalf("validating again changed the config:\n%+v\n%+v", cfg, again)
		}
	})
}

var (
	// keyError is a validation error without a file position: it names the
	// key, a provider's with its index and name.
	keyError = regexp.MustCompile(`^config: ([a-z_]+(\.[a-z_]+)*|auth\.providers\[\d+\]( \(".*"\))?\.[a-z_]+): `)
	lineNo   = regexp.MustCompile(`^(?:toml: )?line (\d+)\b`)
)

// checkLocated fails unless every part of a Load error names the file (and
// any line it names holds a byte of the file) or the key.
func checkLocated(t *testing.T, err error, path, data string) {
	t.Helper()
	lines := 1 + strings.Count(strings.TrimSuffix(data, "\n"), "\n")
	for _, e := range unjoin(err) {
		msg := e.Error()
		rest, inFile := strings.CutPrefix(msg, "config: "+path+": ")
		if !inFile {
			if !keyError.MatchString(msg) {
				t.Fatalf("error %q names neither the file nor a key", msg)
			}
			continue
		}
		if m := lineNo.FindStringSubmatch(rest); m != nil {
			if n, _ := strconv.Atoi(m[1]); n < 1 || n > lines {
				t.Fatalf("error %q names line %d of a %d-line file", msg, n, lines)
			}
		}
	}
}
