package store

import (
	"context"
	"errors"
	"sync"
	"testing"
)

// TestCreateUserFirstAdmin: the first user made on an empty database is an
// administrator, whatever it asked; the next ones only if they asked. Of
// several made at once, exactly one is the first. On both databases.
func TestCreateUserFirstAdmin(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s, err := Open(ctx, dsn, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var wg sync.WaitGroup
		users := make([]*User, 6)
		for i := range users {
			users[i] = &User{Email: string(rune('a'+i)) + "@example.com", Plan: "free"}
			wg.Go(func() {
				if err := s.CreateUserFirstAdmin(ctx, users[i]); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		admins := 0
		for _, u := range users {
			stored, err := s.UserByID(ctx, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			if stored.IsAdmin != u.IsAdmin {
				t.Errorf("%s: stored admin %v, returned %v", u.Email, stored.IsAdmin, u.IsAdmin)
			}
			if stored.IsAdmin {
				admins++
			}
		}
		if admins != 1 {
			t.Errorf("%d administrators among %d first users made at once, want 1", admins, len(users))
		}
		asked := &User{Email: "asked@example.com", Plan: "free", IsAdmin: true}
		if err := s.CreateUserFirstAdmin(ctx, asked); err != nil || !asked.IsAdmin {
			t.Errorf("a later user who asks: admin %v, %v", asked.IsAdmin, err)
		}
		plain := &User{Email: "plain@example.com", Plan: "free"}
		if err := s.CreateUser(ctx, plain); err != nil || plain.IsAdmin {
			t.Errorf("CreateUser: admin %v, %v", plain.IsAdmin, err)
		}
	})
}

// TestRevokeAdmin: the role goes, unless its holder is the only
// administrator (ErrLastAdmin, nothing changed); a user who is no
// administrator is left as they are; an unknown id is ErrNotFound.
func TestRevokeAdmin(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s, err := Open(ctx, dsn, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		a, b, c := &User{Email: "a@example.com", Plan: "free", IsAdmin: true}, &User{Email: "b@example.com", Plan: "free", IsAdmin: true},
			&User{Email: "c@example.com", Plan: "free"}
		for _, u := range []*User{a, b, c} {
			if err := s.CreateUser(ctx, u); err != nil {
				t.Fatal(err)
			}
		}
		admin := func(u *User) bool {
			t.Helper()
			got, err := s.UserByID(ctx, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			return got.IsAdmin
		}
		if err := s.RevokeAdmin(ctx, a.ID); err != nil || admin(a) {
			t.Fatalf("revoke a (b stays): %v, a admin %v", err, admin(a))
		}
		if err := s.RevokeAdmin(ctx, b.ID); !errors.Is(err, ErrLastAdmin) || !admin(b) {
			t.Fatalf("revoke the only administrator: %v, b admin %v; want ErrLastAdmin and no change", err, admin(b))
		}
		if err := s.RevokeAdmin(ctx, c.ID); err != nil || admin(c) {
			t.Errorf("revoke from a non-administrator: %v, admin %v", err, admin(c))
		}
		if has, err := s.HasAdmins(ctx); err != nil || !has {
			t.Errorf("HasAdmins = %v, %v; want true", has, err)
		}
		if err := s.RevokeAdmin(ctx, "usr_nobody"); !errors.Is(err, ErrNotFound) {
			t.Errorf("revoke an unknown user: %v, want ErrNotFound", err)
		}
	})
}
