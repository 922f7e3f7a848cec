package server

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/store"
)

func (e *testEnv) newAdmin(email string) *testUser {
	e.t.Helper()
	u := e.newUser(email)
	if err := e.st.SetUserAdmin(context.Background(), u.ID, true); err != nil {
		e.t.Fatal(err)
	}
	return u
}

// TestAdminAuthorization: every admin endpoint refuses anyone but an
// administrator's session, and changes nothing when it refuses.
func TestAdminAuthorization(t *testing.T) {
	e := newTestEnv(t)
	admin := e.newAdmin("root@example.com")
	plain := e.newUser("bob@example.com")
	adminKey := e.apiKey(admin)
	routes := []struct {
		method, path string
		body         any
	}{
		{"GET", "/v1/admin/users", nil},
		{"POST", "/v1/admin/users", map[string]any{"email": "new@example.com", "password": "long enough pw"}},
		{"PATCH", "/v1/admin/users/" + plain.ID, map[string]any{"plan": "pro", "is_admin": true}},
		{"POST", "/v1/admin/users/" + plain.ID + "/password", map[string]any{"password": "another long pw"}},
		{"DELETE", "/v1/admin/users/" + plain.ID, nil},
		{"GET", "/v1/admin/server", nil},
	}
	for _, rt := range routes {
		t.Run(rt.method+" "+rt.path, func(t *testing.T) {
			wantError(t, e.request(rt.method, rt.path, rt.body, ""), http.StatusUnauthorized, "invalid_token")
			wantError(t, e.request(rt.method, rt.path, rt.body, plain.Token), http.StatusForbidden, "forbidden")
			wantError(t, e.request(rt.method, rt.path, rt.body, adminKey), http.StatusForbidden, "forbidden")
		})
	}
	u, err := e.st.UserByID(context.Background(), plain.ID)
	if err != nil {
		t.Fatalf("the refused delete deleted: %v", err)
	}
	if u.Plan != "free" || u.IsAdmin {
		t.Errorf("refused requests changed the user: plan %s admin %v", u.Plan, u.IsAdmin)
	}
	if ok, _ := auth.CheckPassword(context.Background(), u.PasswordHash, plain.Password); !ok {
		t.Error("a refused password reset changed the password")
	}
	if _, err := e.st.UserByEmail(context.Background(), "new@example.com"); err == nil {
		t.Error("a refused create made the user")
	}
}

// TestAdminUsers: create, list, change plan and role, reset the password,
// delete; each as stored, with the refusals an administrator can meet.
func TestAdminUsers(t *testing.T) {
	e := newTestEnv(t)
	admin := e.newAdmin("root@example.com")
	ctx := context.Background()

	created := e.do(201, "POST", "/v1/admin/users", map[string]any{"email": " carol@example.com ", "name": "Carol",
		"password": "carol's password"}, admin.Token)
	id := created.Str("id")
	u, err := e.st.UserByID(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if u.Email != "carol@example.com" || u.Name != "Carol" || u.Plan != "free" || u.IsAdmin {
		t.Errorf("stored user %+v", u)
	}
	// The new user signs in with the password given.
	e.do(200, "POST", "/v1/auth/local", map[string]string{"email": "carol@example.com", "password": "carol's password"}, "")

	for name, body := range map[string]map[string]any{
		"taken email":    {"email": "CAROL@example.com", "password": "long enough pw"},
		"short password": {"email": "dan@example.com", "password": "short"},
		"bad plan":       {"email": "dan@example.com", "password": "long enough pw", "plan": "gold"},
		"no email":       {"email": "dan", "password": "long enough pw"},
	} {
		r := e.request("POST", "/v1/admin/users", body, admin.Token)
		if r.Status != 400 && r.Status != 409 {
			t.Errorf("%s: %d %s", name, r.Status, r.Raw)
		}
	}
	if _, err := e.st.UserByEmail(ctx, "dan@example.com"); err == nil {
		t.Error("a refused create made the user")
	}

	list := e.do(200, "GET", "/v1/admin/users", nil, admin.Token)
	if users, _ := list.Body["users"].([]any); len(users) != 2 {
		t.Errorf("list: %s", list.Raw)
	}

	p := e.do(200, "PATCH", "/v1/admin/users/"+id, map[string]any{"plan": "pro", "is_admin": true}, admin.Token)
	if p.Str("plan") != "pro" || p.Body["is_admin"] != true {
		t.Errorf("patch answered %s", p.Raw)
	}
	if u, _ = e.st.UserByID(ctx, id); u.Plan != "pro" || !u.IsAdmin {
		t.Errorf("after patch stored %+v", u)
	}
	wantError(t, e.request("PATCH", "/v1/admin/users/"+id, map[string]any{"plan": "gold"}, admin.Token), 400, "invalid_payload")
	wantError(t, e.request("PATCH", "/v1/admin/users/usr_nope", map[string]any{"plan": "pro"}, admin.Token), 404, "not_found")
	wantError(t, e.request("PATCH", "/v1/admin/users/"+admin.ID, map[string]any{"is_admin": false}, admin.Token), 403, "forbidden")
	if u, _ = e.st.UserByID(ctx, admin.ID); !u.IsAdmin {
		t.Error("the administrator revoked their own role")
	}

	// A reset sets the password and ends the user's sessions.
	carol := e.do(200, "POST", "/v1/auth/local", map[string]string{"email": "carol@example.com", "password": "carol's password"}, "").Str("access_token")
	e.do(200, "POST", "/v1/admin/users/"+id+"/password", map[string]any{"password": "a brand new one"}, admin.Token)
	wantError(t, e.request("GET", "/v1/auth/me", nil, carol), 401, "invalid_token")
	wantError(t, e.request("POST", "/v1/auth/local", map[string]string{"email": "carol@example.com", "password": "carol's password"}, ""), 401, "invalid_token")
	e.do(200, "POST", "/v1/auth/local", map[string]string{"email": "carol@example.com", "password": "a brand new one"}, "")
	wantError(t, e.request("POST", "/v1/admin/users/"+id+"/password", map[string]any{"password": "x"}, admin.Token), 400, "invalid_payload")

	wantError(t, e.request("DELETE", "/v1/admin/users/"+admin.ID, nil, admin.Token), 403, "forbidden")
	e.do(200, "DELETE", "/v1/admin/users/"+id, nil, admin.Token)
	if _, err := e.st.UserByID(ctx, id); err == nil {
		t.Error("deleted user still stored")
	}
	wantError(t, e.request("DELETE", "/v1/admin/users/"+id, nil, admin.Token), 404, "not_found")
}

// TestAdminRefusesBadAccounts: POST /v1/admin/users, the password reset
// and the plan change refuse every bad account of the table the service's
// and the command line's tests share, with its words, and change nothing.
func TestAdminRefusesBadAccounts(t *testing.T) {
	e := newTestEnv(t)
	admin := e.newAdmin("root@example.com")
	plain := e.newUser("bob@example.com")
	for _, b := range testkit.BadAccounts {
		t.Run(b.Name, func(t *testing.T) {
			body := map[string]string{"email": b.Email, "password": b.Password}
			if b.Plan != "" {
				body["plan"] = b.Plan
			}
			r := e.request("POST", "/v1/admin/users", body, admin.Token)
			wantError(t, r, http.StatusBadRequest, "invalid_payload")
			if got := r.Str("message"); got != b.Message {
				t.Errorf("create: %q, want %q", got, b.Message)
			}
			var change *response
			switch b.Field() {
			case "password":
				res := e.request("POST", "/v1/admin/users/"+plain.ID+"/password", map[string]string{"password": b.Password}, admin.Token)
				change = &res
			case "plan":
				res := e.request("PATCH", "/v1/admin/users/"+plain.ID, map[string]string{"plan": b.Plan}, admin.Token)
				change = &res
			}
			if change != nil {
				wantError(t, *change, http.StatusBadRequest, "invalid_payload")
				if got := change.Str("message"); got != b.Message {
					t.Errorf("change of %s: %q, want %q", b.Field(), got, b.Message)
				}
			}
		})
	}
	users := e.do(200, "GET", "/v1/admin/users", nil, admin.Token).Body["users"].([]any)
	if len(users) != 2 {
		t.Errorf("%d users after the refusals, want 2", len(users))
	}
	u, err := e.st.UserByID(context.Background(), plain.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := auth.CheckPassword(context.Background(), u.PasswordHash, plain.Password); !ok || u.Plan != "free" {
		t.Errorf("after the refusals: password kept %v, plan %q; want kept, free", ok, u.Plan)
	}
}

// TestAdminServer: the status page's figures come from the store and the
// configuration.
func TestAdminServer(t *testing.T) {
	e := newTestEnv(t)
	admin := e.newAdmin("root@example.com")
	e.newUser("bob@example.com")
	r := e.do(200, "GET", "/v1/admin/server", nil, admin.Token)
	if r.Body["users"] != float64(2) || r.Body["callback_queue_depth"] != float64(0) || r.Body["dead_lettered_deliveries"] != float64(0) {
		t.Errorf("server status %s", r.Raw)
	}
	push, _ := r.Body["push"].(map[string]any)
	if push["apns"] != false || push["fcm"] != false || push["webpush"] != true {
		t.Errorf("push %v", push)
	}
	if _, ok := r.Body["uptime_seconds"].(float64); !ok || r.Str("started_at") == "" {
		t.Errorf("no uptime in %s", r.Raw)
	}
}

// TestAccountPassword: the current password is required, this session
// survives, the others end.
func TestAccountPassword(t *testing.T) {
	e := newTestEnv(t)
	u := e.newUser("ada@example.com")
	other := e.do(200, "POST", "/v1/auth/local", map[string]string{"email": u.Email, "password": u.Password}, "").Str("access_token")
	key := e.apiKey(u)

	wantError(t, e.request("POST", "/v1/account/password", map[string]string{"current_password": "wrong", "new_password": "a new password"}, u.Token), 400, "invalid_payload")
	wantError(t, e.request("POST", "/v1/account/password", map[string]string{"current_password": u.Password, "new_password": "short"}, u.Token), 400, "invalid_payload")
	wantError(t, e.request("POST", "/v1/account/password", map[string]string{"current_password": u.Password, "new_password": "a new password"}, key), 403, "forbidden")
	e.do(200, "GET", "/v1/auth/me", nil, other) // nothing refused ended a session

	e.do(200, "POST", "/v1/account/password", map[string]string{"current_password": u.Password, "new_password": "a new password"}, u.Token)
	e.do(200, "GET", "/v1/auth/me", nil, u.Token)
	wantError(t, e.request("GET", "/v1/auth/me", nil, other), 401, "invalid_token")
	e.do(200, "POST", "/v1/auth/local", map[string]string{"email": u.Email, "password": "a new password"}, "")

	acc := e.do(200, "GET", "/v1/account", nil, u.Token)
	if acc.Body["has_password"] != true {
		t.Errorf("account %s", acc.Raw)
	}
	if ids, ok := acc.Body["identities"].([]any); !ok || len(ids) != 0 {
		t.Errorf("identities %s", acc.Raw)
	}
}

// TestAccountIdentities: the account lists its OIDC identities, without the
// provider's subject, and says there is no local password to change.
func TestAccountIdentities(t *testing.T) {
	e := newTestEnv(t)
	u, _, err := e.st.SignInOIDC(context.Background(), store.OIDCSignIn{Provider: "google", Subject: "sub-123456",
		Email: "ada@example.com", EmailVerified: true, AllowSignup: true, Plan: "free"})
	if err != nil {
		t.Fatal(err)
	}
	tok := e.sessionFor(u)
	acc := e.do(200, "GET", "/v1/account", nil, tok)
	ids, _ := acc.Body["identities"].([]any)
	if acc.Body["has_password"] != false || len(ids) != 1 || ids[0].(map[string]any)["provider"] != "google" ||
		ids[0].(map[string]any)["email"] != "ada@example.com" || strings.Contains(string(acc.Raw), "sub-123456") {
		t.Errorf("account %s", acc.Raw)
	}
	wantError(t, e.request("POST", "/v1/account/password", map[string]string{"current_password": "", "new_password": "a new password"}, tok), 403, "forbidden")
}

// sessionFor starts a session for u through the service (as an OIDC
// sign-in would) and returns its access token.
func (e *testEnv) sessionFor(u *store.User) string {
	e.t.Helper()
	g, err := e.s.svc.StartSession(context.Background(), u.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return g.AccessToken
}
