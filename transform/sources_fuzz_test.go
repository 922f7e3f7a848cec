package transform

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzSources sends fuzzed bodies and events to the alert and forge
// transformers with the right credential for a fuzzed source secret, and
// once more with a forged one.
func FuzzSources(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		for _, ev := range []string{"push", "pull_request", "issues", "release"} {
			f.Add(uint8(len(b)), ev, "s3cret-value", "", b)
		}
	}
	f.Add(uint8(2), "x", "s3cret-value", "Bearer s3cret-value", []byte(`{"heartbeat":{"status":0},"monitor":{}}`))
	sources := []string{"alertmanager", "grafana", "uptimekuma", "gitea", "forgejo", "gitlab"}
	f.Fuzz(func(t *testing.T, pick uint8, event, secret, forged string, body []byte) {
		if secret == "" || strings.ContainsFunc(secret, func(r rune) bool { return r <= ' ' || r > '~' }) {
			return // CheckSourceSecret refuses these
		}
		source := sources[int(pick)%len(sources)]
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write(body)
		sig := hex.EncodeToString(mac.Sum(nil))
		h := headers("X-Gitea-Event", event, "X-Forgejo-Event", event, "X-Gitea-Signature", sig, "X-Forgejo-Signature", sig,
			"X-Gitlab-Token", secret, "Authorization", "Bearer "+secret)
		checkTransform(t, source, secret, h, body)
		checkForged(t, source, secret, headers("X-Gitea-Event", event, "X-Gitea-Signature", forged, "X-Gitlab-Token", forged, "Authorization", forged), body)
	})
}
