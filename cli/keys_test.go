package cli

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/heraldhq/herald/store"
)

var cliKeyRe = regexp.MustCompile(`^pk_live_[0-9A-Za-z]{32}$`)

func TestCLIKeyBackupVersion(t *testing.T) {
	t.Parallel()
	env := newCLIEnv(t)
	ctx := context.Background()
	mustCLI(t, env, "", "user", "add", "a@example.com")

	out := mustCLI(t, env, "", "key", "create", "a@example.com", "--name", "ci")
	key := strings.TrimSpace(out)
	if !cliKeyRe.MatchString(key) || len(key) != 40 {
		t.Fatalf("key create printed %q, want one 40-character pk_live_ key", out)
	}
	st := openCLIStore(t, env)
	k, u, err := st.APIKeyByHash(ctx, store.HashToken(key))
	if err != nil {
		t.Fatalf("APIKeyByHash: %v", err)
	}
	if u.Email != "a@example.com" || k.Name != "ci" || k.Prefix != key[:12] {
		t.Errorf("stored key %+v of %s", k, u.Email)
	}
	for _, args := range [][]string{
		{"key", "create", "a@example.com"},                 // no --name
		{"key", "create", "a@example.com", "--name", "  "}, // blank --name
		{"key", "create", "x@example.com", "--name", "ci"}, // unknown user
	} {
		if out, _, err := runCLI(t, env, "", args...); err == nil {
			t.Errorf("herald %s succeeded: %q", strings.Join(args, " "), out)
		}
	}
	// A blank name is refused by the rule POST /v1/keys applies, in its words.
	if _, _, err := runCLI(t, env, "", "key", "create", "a@example.com", "--name", "  "); err == nil || err.Error() != "name is required" {
		t.Errorf("key create with a blank --name: %v, want the API's words, name is required", err)
	}

	dst := filepath.Join(t.TempDir(), "copy.db")
	out = mustCLI(t, env, "", "backup", dst)
	if !strings.Contains(out, dst) {
		t.Errorf("backup printed %q", out)
	}
	if n := cliCountUsers(t, dst); n != 1 {
		t.Errorf("backup holds %d users, want 1", n)
	}
	// A second backup to the same file replaces it.
	mustCLI(t, env, "", "user", "add", "b@example.com")
	mustCLI(t, env, "", "backup", dst)
	if n := cliCountUsers(t, dst); n != 2 {
		t.Errorf("second backup holds %d users, want 2", n)
	}

	out = mustCLI(t, env, "", "version")
	if !strings.HasPrefix(out, "herald ") || !strings.Contains(out, "go1.") {
		t.Errorf("version printed %q", out)
	}
}
