package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Sign-in refusals.
var (
	ErrSignupDisabled = errors.New("store: sign-up through this provider is turned off")
	ErrEmailTaken     = errors.New("store: a user with this email already exists and linking is off")
	ErrEmailRequired  = errors.New("store: a new identity needs an email")
	// ErrEmailUnverified refuses an identity whose provider did not verify
	// its email: such an address may not claim an account, new or old.
	ErrEmailUnverified = errors.New("store: the identity provider has not verified this email")
)

// OIDCSignIn is a verified identity presented at sign-in, with the
// provider's rules.
type OIDCSignIn struct {
	Provider      string
	Subject       string
	Email         string
	EmailVerified bool
	Name          string
	// AdminManaged says the provider has an admin claim configured; Admin,
	// that it matched. A match makes the user an admin; a later sign-in
	// without it withdraws that (and only that) admin flag.
	AdminManaged bool
	Admin        bool
	AllowSignup  bool
	LinkByEmail  bool
	Plan         string // plan of a new user
	// FirstAdmin makes a new user an administrator when no user exists
	// yet (decided in the same write as the insert).
	FirstAdmin bool
}

// syncClaimedAdmin applies a provider's admin claim at sign-in: a match
// makes a non-admin an admin and records that this identity did so; no
// match withdraws an admin flag this identity gave, unless another of the
// user's identities gave it too.
func syncClaimedAdmin(tx *writeTx, u *User, in OIDCSignIn) error {
	var granted bool
	if err := tx.QueryRow("SELECT grants_admin FROM identities WHERE provider = ? AND subject = ?",
		in.Provider, in.Subject).Scan(&granted); err != nil {
		return err
	}
	switch {
	case in.Admin && !u.IsAdmin:
		u.IsAdmin = true
		if _, err := tx.Exec("UPDATE users SET is_admin = 1 WHERE id = ?", u.ID); err != nil {
			return err
		}
		_, err := tx.Exec("UPDATE identities SET grants_admin = 1 WHERE provider = ? AND subject = ?",
			in.Provider, in.Subject)
		return err
	case !in.Admin && granted:
		if _, err := tx.Exec("UPDATE identities SET grants_admin = 0 WHERE provider = ? AND subject = ?",
			in.Provider, in.Subject); err != nil {
			return err
		}
		var others bool
		if err := tx.QueryRow("SELECT EXISTS (SELECT 1 FROM identities WHERE user_id = ? AND grants_admin = 1)",
			u.ID).Scan(&others); err != nil {
			return err
		}
		if others {
			return nil
		}
		u.IsAdmin = false
		_, err := tx.Exec("UPDATE users SET is_admin = 0 WHERE id = ?", u.ID)
		return err
	}
	return nil
}

// SignInOIDC finds or creates the user for an identity, in one transaction:
// a known (provider, subject) is that user; else, with LinkByEmail and a
// verified email, an existing user with that email is linked, if that
// user's own address was verified too; else, with AllowSignup and a
// verified email, a new user is created. An unverified email never creates
// or joins an account: whoever controls an identity provider account can
// type any address into it. It returns the user and whether it was
// created.
func (s *Store) SignInOIDC(ctx context.Context, in OIDCSignIn) (*User, bool, error) {
	var u *User
	created := false
	err := s.update(ctx, func(tx *writeTx) error {
		var err error
		created = false
		now := s.now().UTC().Truncate(time.Millisecond)
		u, err = scanUser(tx.QueryRow("SELECT "+userCols+` FROM identities i JOIN users u ON u.id = i.user_id
			WHERE i.provider = ? AND i.subject = ?`, in.Provider, in.Subject))
		switch {
		case err == nil:
			if in.EmailVerified && strings.EqualFold(in.Email, u.Email) {
				// The account's own identity vouches for its address now.
				if _, err := tx.Exec("UPDATE users SET email_verified = 1 WHERE id = ? AND email_verified = 0", u.ID); err != nil {
					return err
				}
			}
		case errors.Is(err, ErrNotFound):
			if u, created, err = s.claimEmail(tx, in, now); err != nil {
				return err
			}
		default:
			return err
		}
		if in.AdminManaged {
			return syncClaimedAdmin(tx, u, in)
		}
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("store: oidc sign-in %s: %w", in.Provider, err)
	}
	return u, created, nil
}

// claimEmail gives a new identity its user: the existing user with its
// email, when linking is on and both addresses are verified, or a new user.
func (s *Store) claimEmail(tx *writeTx, in OIDCSignIn, now time.Time) (*User, bool, error) {
	if in.Email == "" {
		return nil, false, ErrEmailRequired
	}
	if !in.EmailVerified {
		return nil, false, ErrEmailUnverified
	}
	created := false
	var ownVerified bool
	col, arg := s.dialect.userEmail()
	u, err := scanUser(tx.QueryRow("SELECT "+userCols+", u.email_verified FROM users u WHERE "+col+" = "+arg, in.Email), &ownVerified)
	switch {
	case err == nil && !(in.LinkByEmail && ownVerified):
		return nil, false, ErrEmailTaken
	case errors.Is(err, ErrNotFound):
		if !in.AllowSignup {
			return nil, false, ErrSignupDisabled
		}
		if taken, err := emailTakenFolded(tx, in.Email); err != nil || taken {
			return nil, false, cmp.Or(err, ErrEmailTaken)
		}
		u = &User{ID: NewID("usr_"), Email: in.Email, Name: in.Name, Plan: in.Plan, CreatedAt: now}
		if in.FirstAdmin {
			if u.IsAdmin, err = noUsers(tx); err != nil {
				return nil, false, err
			}
		}
		if _, err := tx.Exec(`INSERT INTO users (id, email, name, plan, is_admin, created_at, email_verified) VALUES (?, ?, ?, ?, ?, ?, 1)`,
			u.ID, u.Email, u.Name, u.Plan, u.IsAdmin, ms(now)); err != nil {
			return nil, false, err
		}
		created = true
	case err != nil:
		return nil, false, err
	}
	if _, err := tx.Exec(`INSERT INTO identities (provider, subject, user_id, email, created_at) VALUES (?, ?, ?, ?, ?)`,
		in.Provider, in.Subject, u.ID, in.Email, ms(now)); err != nil {
		return nil, false, err
	}
	return u, created, nil
}
