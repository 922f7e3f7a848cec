package cli

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/testkit"
)

// serveInProcess runs herald serve in this process on a free port over
// env's data directory, until the test ends, and returns its base URL.
func serveInProcess(t *testing.T, env cliEnv) (base string, logs *testkit.SyncBuffer) {
	t.Helper()
	base, logs, stop := startInProcess(t, env)
	t.Cleanup(stop)
	return base, logs
}

// startInProcess is serveInProcess that also returns a function that stops
// the server and waits until it has.
func startInProcess(t *testing.T, env cliEnv) (base string, logs *testkit.SyncBuffer, stop func()) {
	t.Helper()
	addr := testkit.FreeAddr(t)
	base = "http://" + addr
	env["HERALD_LISTEN"] = addr
	logs = &testkit.SyncBuffer{}
	a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: logs, getenv: env.get}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	exited := make(chan struct{})
	go func() { served <- a.serve(ctx); close(exited) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-served; err != nil {
				t.Errorf("serve: %v", err)
			}
		})
	}
	testkit.WaitHealthy(t, base, exited, 30*time.Second, logs)
	return base, logs, stop
}

// TestCLIFirstUserIsAdmin: the first user of an empty server is an
// administrator, with or without --admin, and the command says so; the
// next one is not, unless asked.
func TestCLIFirstUserIsAdmin(t *testing.T) {
	t.Parallel()
	env := newCLIEnv(t)
	out := mustCLI(t, env, "", "user", "add", "first@example.com")
	if !strings.Contains(out, "first@example.com is an administrator: the first user of this server is one") {
		t.Errorf("the first user add printed %q, want it to say the user is an administrator", out)
	}
	out = mustCLI(t, env, "", "user", "add", "second@example.com")
	if strings.Contains(out, "administrator") {
		t.Errorf("the second user add printed %q: it is no administrator", out)
	}
	out = mustCLI(t, env, "", "user", "add", "third@example.com", "--admin")
	if !strings.Contains(out, "third@example.com is an administrator\n") {
		t.Errorf("user add --admin printed %q", out)
	}
	st := openCLIStore(t, env)
	for email, want := range map[string]bool{"first@example.com": true, "second@example.com": false, "third@example.com": true} {
		u, err := st.UserByEmail(t.Context(), email)
		if err != nil || u.IsAdmin != want {
			t.Errorf("%s: %+v, %v; want is_admin %v", email, u, err, want)
		}
	}
}

// TestCLISetAdmin: set-admin grants the role and --off revokes it, except
// from the only administrator, which is refused with a message that says
// what to do, and changes nothing.
func TestCLISetAdmin(t *testing.T) {
	t.Parallel()
	env := newCLIEnv(t)
	mustCLI(t, env, "", "user", "add", "a@example.com") // the first: an administrator
	mustCLI(t, env, "", "user", "add", "b@example.com")
	st := openCLIStore(t, env)
	admin := func(email string) bool {
		t.Helper()
		u, err := st.UserByEmail(t.Context(), email)
		if err != nil {
			t.Fatal(err)
		}
		return u.IsAdmin
	}

	if out := mustCLI(t, env, "", "user", "set-admin", "b@example.com"); out != "b@example.com is now an administrator\n" || !admin("b@example.com") {
		t.Errorf("set-admin printed %q; b is admin: %v", out, admin("b@example.com"))
	}
	if out := mustCLI(t, env, "", "user", "set-admin", "a@example.com", "--off"); out != "a@example.com is no longer an administrator\n" || admin("a@example.com") {
		t.Errorf("set-admin --off printed %q; a is admin: %v", out, admin("a@example.com"))
	}
	_, _, err := runCLI(t, env, "", "user", "set-admin", "b@example.com", "--off")
	if err == nil || err.Error() != "b@example.com: this user is the only administrator; make another user an administrator first (herald user set-admin OTHER_EMAIL)" {
		t.Errorf("revoking the only administrator: %v", err)
	}
	if !admin("b@example.com") {
		t.Error("the refused --off revoked the only administrator")
	}
	// Not an administrator: --off leaves them as they are.
	mustCLI(t, env, "", "user", "set-admin", "a@example.com", "--off")
	if _, _, err := runCLI(t, env, "", "user", "set-admin", "nobody@example.com"); err == nil || !strings.Contains(err.Error(), "no user with email nobody@example.com") {
		t.Errorf("set-admin of an unknown user: %v", err)
	}
}

// TestCLIAndAPIRefuseTheSame: herald user add and passwd take passwords and
// emails by the rules POST /v1/admin/users and its password reset apply,
// and refuse with the same words; the refusals change nothing.
func TestCLIAndAPIRefuseTheSame(t *testing.T) {
	t.Parallel()
	env := newCLIEnv(t)
	base, _ := serveInProcess(t, env)
	mustCLI(t, env, "correct horse battery\n", "user", "add", "admin@example.com", "--password-stdin")
	status, sess := cliHTTP(t, "POST", base+"/v1/auth/local", map[string]string{"email": "admin@example.com", "password": "correct horse battery"}, "")
	if status != 200 {
		t.Fatalf("sign-in: %d %v", status, sess)
	}
	token := sess["access_token"].(string)
	// The first user can use the admin API: it is an administrator.
	status, me := cliHTTP(t, "GET", base+"/v1/auth/me", nil, token)
	if status != 200 || me["is_admin"] != true {
		t.Fatalf("the first user: %d %v, want is_admin true", status, me)
	}
	userID := me["id"].(string)

	for _, c := range []struct{ name, email, password string }{
		{"one character", "short@example.com", "x"},
		{"seven characters", "short@example.com", "1234567"},
		{"too long", "long@example.com", strings.Repeat("p", 257)},
		{"not an email", "nobody", "correct horse battery"},
		{"nothing before the @", "@example.com", "correct horse battery"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, cliErr := runCLI(t, env, c.password+"\n", "user", "add", c.email, "--password-stdin")
			status, api := cliHTTP(t, "POST", base+"/v1/admin/users", map[string]string{"email": c.email, "password": c.password}, token)
			if cliErr == nil || status != 400 || api["error"] != "invalid_payload" {
				t.Fatalf("CLI: %v; API: %d %v; want both refused", cliErr, status, api)
			}
			if cliErr.Error() != api["message"] {
				t.Errorf("CLI says %q, API says %q: want the same words", cliErr, api["message"])
			}
		})
	}
	_, _, cliErr := runCLI(t, env, "x\n", "user", "passwd", "admin@example.com")
	status, api := cliHTTP(t, "POST", base+"/v1/admin/users/"+userID+"/password", map[string]string{"password": "x"}, token)
	if cliErr == nil || status != 400 || cliErr.Error() != api["message"] || cliErr.Error() != "password must be 8 to 256 characters" {
		t.Errorf("passwd x: CLI %v, API %d %v; want both to refuse with the same words", cliErr, status, api)
	}
	if list := mustCLI(t, env, "", "user", "list"); strings.Count(list, "@") != 1 {
		t.Errorf("users after the refusals:\n%s", list)
	}
	// The password stayed: the session and the password still work.
	if status, _ := cliHTTP(t, "POST", base+"/v1/auth/local", map[string]string{"email": "admin@example.com", "password": "correct horse battery"}, ""); status != 200 {
		t.Errorf("sign-in after the refused passwd: %d", status)
	}
}
