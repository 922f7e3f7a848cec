package service

import (
	"context"
	"errors"
	"testing"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/internal/pgtest"
	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/store"
)

// onEachDatabase runs body on the rules over an empty SQLite file and over
// an empty PostgreSQL database: the account rules hold on both.
func onEachDatabase(t *testing.T, body func(t *testing.T, s *Service, st *store.Store)) {
	t.Helper()
	pgtest.ForEachBackend(t, func(t *testing.T, dsn string) {
		st, err := store.Open(context.Background(), dsn, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		body(t, New(st, Options{DefaultPlan: config.PlanFree}), st)
	})
}

// wantWords fails t unless err is an Invalid refusal saying exactly msg:
// the words the API and the command line both show.
func wantWords(t *testing.T, err error, msg string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Kind != Invalid || e.Message != msg {
		t.Errorf("got %v, want the refusal %q", err, msg)
	}
}

func countUsers(t *testing.T, st *store.Store) int {
	t.Helper()
	users, err := st.ListUsers(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return len(users)
}

// TestAccountRefusals: CreateUser, ResetPassword and SetPlan refuse every
// bad account of the shared table with its words, and change nothing:
// the API and the command line both reach these rules and no others.
func TestAccountRefusals(t *testing.T) {
	onEachDatabase(t, func(t *testing.T, s *Service, st *store.Store) {
		ctx := t.Context()
		u, err := s.CreateUser(ctx, NewUser{Email: "kept@example.com", Password: testkit.GoodPassword})
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range testkit.BadAccounts {
			t.Run(b.Name, func(t *testing.T) {
				_, err := s.CreateUser(ctx, NewUser{Email: b.Email, Password: b.Password, Plan: b.Plan})
				wantWords(t, err, b.Message)
				switch b.Field() {
				case "password":
					wantWords(t, s.ResetPassword(ctx, u.ID, b.Password), b.Message)
				case "plan":
					wantWords(t, s.SetPlan(ctx, u.ID, b.Plan), b.Message)
				}
			})
		}
		if n := countUsers(t, st); n != 1 {
			t.Errorf("%d users after the refusals, want 1", n)
		}
		got, err := st.UserByID(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Plan != config.PlanFree || got.PasswordHash != u.PasswordHash {
			t.Errorf("after the refusals: plan %q, password hash changed %v; want free, unchanged", got.Plan, got.PasswordHash != u.PasswordHash)
		}
	})
}

// TestCreateUser: the first account is the administrator whatever it
// asks; an account without a password has none; an empty plan is the
// default plan; an email taken, whatever its case, is a conflict.
func TestCreateUser(t *testing.T) {
	onEachDatabase(t, func(t *testing.T, s *Service, st *store.Store) {
		ctx := t.Context()
		first, err := s.CreateUser(ctx, NewUser{Email: " first@example.com ", Name: " First ", NoPassword: true})
		if err != nil {
			t.Fatal(err)
		}
		if !first.IsAdmin || first.PasswordHash != "" || first.Plan != config.PlanFree || first.Email != "first@example.com" || first.Name != "First" {
			t.Errorf("first user = %+v; want an administrator without a password on the free plan, email and name trimmed", first)
		}
		second, err := s.CreateUser(ctx, NewUser{Email: "second@example.com", Password: testkit.GoodPassword, Plan: config.PlanPro})
		if err != nil {
			t.Fatal(err)
		}
		if second.IsAdmin || second.PasswordHash == "" || second.Plan != config.PlanPro {
			t.Errorf("second user = %+v; want no administrator, a password, plan pro", second)
		}
		_, err = s.CreateUser(ctx, NewUser{Email: "FIRST@example.com", NoPassword: true})
		var e *Error
		if !errors.As(err, &e) || e.Kind != Conflict || e.Code != "email_taken" {
			t.Errorf("a taken email: %v, want the conflict email_taken", err)
		}
		// Addresses that differ only in the case of letters beyond ASCII
		// (Ä and ä, a Kelvin sign and k) are one address: an approval
		// rule's entry names them both.
		for _, pair := range [][2]string{{"ärger@example.com", "ÄRGER@example.com"}, {"kim@example.com", "\u212aim@example.com"}} {
			if _, err := s.CreateUser(ctx, NewUser{Email: pair[0], NoPassword: true}); err != nil {
				t.Fatal(err)
			}
			_, err := s.CreateUser(ctx, NewUser{Email: pair[1], NoPassword: true})
			if !errors.As(err, &e) || e.Code != "email_taken" {
				t.Errorf("%s beside %s: %v, want the conflict email_taken", pair[1], pair[0], err)
			}
		}
		// Bytes that are not UTF-8 (which the API's JSON cannot carry, and
		// no sign-in could send): refused at the command line too.
		_, err = s.CreateUser(ctx, NewUser{Email: "bytes@example.com", Password: "p\xe4sswords\xff\xfe"})
		wantWords(t, err, "password must be UTF-8 text")
		if n := countUsers(t, st); n != 4 {
			t.Errorf("%d users, want 4", n)
		}
	})
}

// TestDeleteUser: the operator (by nil) deletes anyone; an administrator
// deletes others but not themself from the users page; DeleteAccount
// deletes one's own.
func TestDeleteUser(t *testing.T) {
	onEachDatabase(t, func(t *testing.T, s *Service, st *store.Store) {
		ctx := t.Context()
		var users []*store.User
		for _, email := range []string{"admin@example.com", "a@example.com", "b@example.com", "c@example.com"} {
			u, err := s.CreateUser(ctx, NewUser{Email: email, NoPassword: true})
			if err != nil {
				t.Fatal(err)
			}
			users = append(users, u)
		}
		admin := users[0]
		var e *Error
		if err := s.DeleteUser(ctx, admin, admin.ID); !errors.As(err, &e) || e.Kind != Forbidden {
			t.Errorf("an administrator deleting themself from the users page: %v, want forbidden", err)
		}
		if err := s.DeleteUser(ctx, admin, users[1].ID); err != nil {
			t.Errorf("an administrator deleting another: %v", err)
		}
		if err := s.DeleteUser(ctx, nil, users[2].ID); err != nil {
			t.Errorf("the operator deleting a user: %v", err)
		}
		if err := s.DeleteUser(ctx, nil, users[2].ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("deleting a deleted user: %v, want ErrNotFound", err)
		}
		if err := s.DeleteAccount(ctx, users[3]); err != nil {
			t.Errorf("deleting one's own account: %v", err)
		}
		left, err := st.ListUsers(ctx)
		if err != nil || len(left) != 1 || left[0].ID != admin.ID {
			t.Errorf("left: %+v, %v; want the administrator only", left, err)
		}
	})
}

// TestRevokeAPIKey: a key stops working once revoked; another user's key
// looks like no key at all, and stays.
func TestRevokeAPIKey(t *testing.T) {
	onEachDatabase(t, func(t *testing.T, s *Service, st *store.Store) {
		ctx := t.Context()
		a, err := s.CreateUser(ctx, NewUser{Email: "a@example.com", NoPassword: true})
		if err != nil {
			t.Fatal(err)
		}
		b, err := s.CreateUser(ctx, NewUser{Email: "b@example.com", NoPassword: true})
		if err != nil {
			t.Fatal(err)
		}
		k, key, err := s.CreateAPIKey(ctx, a.ID, " ci ")
		if err != nil {
			t.Fatal(err)
		}
		if k.Name != "ci" {
			t.Errorf("key name %q, want it trimmed", k.Name)
		}
		if _, _, err := s.CreateAPIKey(ctx, a.ID, "  "); err == nil {
			t.Error("a blank key name was taken")
		} else {
			wantWords(t, err, "name is required")
		}
		if err := s.RevokeAPIKey(ctx, b.ID, k.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("revoking another user's key: %v, want ErrNotFound", err)
		}
		if _, _, err := st.APIKeyByHash(ctx, store.HashToken(key)); err != nil {
			t.Fatalf("the key after another user's revoke: %v, want it working", err)
		}
		if err := s.RevokeAPIKey(ctx, a.ID, k.ID); err != nil {
			t.Fatal(err)
		}
		if _, _, err := st.APIKeyByHash(ctx, store.HashToken(key)); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the key after its revoke: %v, want ErrNotFound", err)
		}
		if err := s.RevokeAPIKey(ctx, a.ID, k.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("revoking it again: %v, want ErrNotFound", err)
		}
	})
}
