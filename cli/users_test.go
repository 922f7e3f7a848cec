package cli

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/store"
)

func TestCLIUsers(t *testing.T) {
	t.Parallel()
	env := newCLIEnv(t)
	ctx := context.Background()

	out := mustCLI(t, env, "s3cret pass\n", "user", "add", "a@example.com", "--name", "A", "--password-stdin", "--plan", "pro")
	if !strings.Contains(out, "a@example.com") || !strings.Contains(out, "pro") || !strings.Contains(out, "usr_") {
		t.Errorf("user add printed %q", out)
	}
	mustCLI(t, env, "", "user", "add", "b@example.com", "--admin")

	list := mustCLI(t, env, "", "user", "list")
	lines := strings.Split(strings.TrimSpace(list), "\n")
	if len(lines) != 3 {
		t.Fatalf("user list has %d lines, want header + 2:\n%s", len(lines), list)
	}
	if f := strings.Fields(lines[1]); len(f) < 5 || f[1] != "a@example.com" || f[2] != "A" || f[3] != "pro" || f[4] != "true" {
		t.Errorf("user list line for a (the first user: an administrator) = %q", lines[1])
	}
	if f := strings.Fields(lines[2]); len(f) < 4 || f[1] != "b@example.com" || f[2] != "pro" || f[3] != "true" {
		t.Errorf("user list line for b (the CLI's plan, pro; admin) = %q", lines[2])
	}

	for _, c := range []struct {
		name, stdin string
		args        []string
		inErr       string
	}{
		{"duplicate email", "", []string{"user", "add", "A@example.com"}, "exists"},
		{"bad plan", "", []string{"user", "add", "c@example.com", "--plan", "gold"}, "plan"},
		{"not an email", "", []string{"user", "add", "nobody"}, "email"},
		{"no password on stdin", "", []string{"user", "add", "d@example.com", "--password-stdin"}, "password"},
		{"set-plan bad plan", "", []string{"user", "set-plan", "a@example.com", "gold"}, "plan"},
		{"set-plan unknown user", "", []string{"user", "set-plan", "x@example.com", "free"}, "x@example.com"},
		{"delete unknown user", "", []string{"user", "delete", "x@example.com"}, "x@example.com"},
		{"missing argument", "", []string{"user", "add"}, "arg"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, _, err := runCLI(t, env, c.stdin, c.args...)
			if err == nil {
				t.Fatalf("herald %s succeeded: %q", strings.Join(c.args, " "), out)
			}
			if !strings.Contains(err.Error(), c.inErr) {
				t.Errorf("error %q does not mention %q", err, c.inErr)
			}
		})
	}

	st := openCLIStore(t, env)
	all, err := st.ListUsers(ctx)
	if err != nil || len(all) != 2 {
		t.Fatalf("after the failed commands: %d users, %v; want 2", len(all), err)
	}
	a, err := st.UserByEmail(ctx, "a@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if a.Name != "A" || a.Plan != "pro" || !a.IsAdmin || a.PasswordHash == "" || strings.Contains(a.PasswordHash, "s3cret") {
		t.Errorf("stored user a = %+v", a)
	}

	mustCLI(t, env, "", "user", "set-plan", "a@example.com", "free")
	if a, err := st.UserByEmail(ctx, "a@example.com"); err != nil || a.Plan != "free" {
		t.Errorf("after set-plan: %+v, %v", a, err)
	}

	mustCLI(t, env, "", "user", "delete", "b@example.com")
	if _, err := st.UserByEmail(ctx, "b@example.com"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("after delete: %v, want ErrNotFound", err)
	}
	if list := mustCLI(t, env, "", "user", "list"); strings.Contains(list, "b@example.com") || !strings.Contains(list, "a@example.com") {
		t.Errorf("user list after delete:\n%s", list)
	}
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

// TestCLIAndAPIRefuseTheSame: herald user add, passwd and set-plan take
// passwords, emails and plans by the rules POST /v1/admin/users, its
// password reset and its plan change apply, and refuse every bad account
// of the table the service's and the API's tests share with the same
// words; the refusals change nothing.
func TestCLIAndAPIRefuseTheSame(t *testing.T) {
	t.Parallel()
	env := newCLIEnv(t)
	base, _ := serveInProcess(t, env)
	mustCLI(t, env, testkit.GoodPassword+"\n", "user", "add", "admin@example.com", "--password-stdin", "--plan", "free")
	status, sess := cliHTTP(t, "POST", base+"/v1/auth/local", map[string]string{"email": "admin@example.com", "password": testkit.GoodPassword}, "")
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

	// same fails t unless the command and the request were both refused,
	// with the table's words.
	same := func(t *testing.T, what string, cliErr error, status int, api map[string]any, want string) {
		t.Helper()
		if cliErr == nil || status != 400 || api["error"] != "invalid_payload" {
			t.Fatalf("%s: CLI %v; API %d %v; want both refused", what, cliErr, status, api)
		}
		if cliErr.Error() != want || api["message"] != want {
			t.Errorf("%s: CLI says %q, API says %q; want both to say %q", what, cliErr, api["message"], want)
		}
	}
	for _, b := range testkit.BadAccounts {
		t.Run(b.Name, func(t *testing.T) {
			args := []string{"user", "add", b.Email, "--password-stdin"}
			body := map[string]string{"email": b.Email, "password": b.Password}
			if b.Plan != "" {
				args = append(args, "--plan", b.Plan)
				body["plan"] = b.Plan
			}
			_, _, cliErr := runCLI(t, env, b.Password+"\n", args...)
			status, api := cliHTTP(t, "POST", base+"/v1/admin/users", body, token)
			same(t, "add", cliErr, status, api, b.Message)
			switch b.Field() {
			case "password":
				_, _, cliErr := runCLI(t, env, b.Password+"\n", "user", "passwd", "admin@example.com")
				status, api := cliHTTP(t, "POST", base+"/v1/admin/users/"+userID+"/password", map[string]string{"password": b.Password}, token)
				same(t, "passwd", cliErr, status, api, b.Message)
			case "plan":
				_, _, cliErr := runCLI(t, env, "", "user", "set-plan", "admin@example.com", b.Plan)
				status, api := cliHTTP(t, "PATCH", base+"/v1/admin/users/"+userID, map[string]string{"plan": b.Plan}, token)
				same(t, "set-plan", cliErr, status, api, b.Message)
			}
		})
	}
	if list := mustCLI(t, env, "", "user", "list"); strings.Count(list, "@") != 1 || !strings.Contains(list, " free ") {
		t.Errorf("users after the refusals (want the administrator alone, on plan free):\n%s", list)
	}
	// The password stayed: it still signs in.
	if status, _ := cliHTTP(t, "POST", base+"/v1/auth/local", map[string]string{"email": "admin@example.com", "password": testkit.GoodPassword}, ""); status != 200 {
		t.Errorf("sign-in after the refused passwd: %d", status)
	}
}
