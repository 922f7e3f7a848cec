package service

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/store"
)

// Password length bounds, in characters. The upper bound keeps a hash from
// being asked to chew on megabytes.
const (
	MinPassword = 8
	MaxPassword = 256
)

// NewUser is what an administrator, or the operator at the command line,
// gives to create an account.
type NewUser struct {
	Email, Name, Password, Plan string
	Admin                       bool
	// NoPassword makes an account without a local password: it signs in
	// through an identity provider until one is set (herald user add
	// without --password-stdin). Otherwise Password is required.
	NoPassword bool
}

// checkPassword is the rule of every password, whichever door sets it:
// the API's JSON can carry neither a NUL nor bytes that are not UTF-8, and
// a password the sign-in form cannot send would lock its account out.
func checkPassword(field, password string) error {
	if n := utf8.RuneCountInString(password); n < MinPassword || n > MaxPassword {
		return invalid("%s must be %d to %d characters", field, MinPassword, MaxPassword)
	}
	if strings.ContainsRune(password, 0) {
		return invalid("%s must not contain a NUL character (\\u0000)", field)
	}
	if !utf8.ValidString(password) {
		return invalid("%s must be UTF-8 text", field)
	}
	return nil
}

// checkEmail is the rule of every account's address: the one an approval
// rule or an escalation list names it by (normalizeEntry), so neither a
// space nor a control character.
func checkEmail(email string) error {
	if at := strings.Index(email, "@"); at < 1 || at == len(email)-1 || utf8.RuneCountInString(email) > 254 ||
		strings.IndexFunc(email, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return invalid("email must be an email address")
	}
	return nil
}

func checkPlan(plan string) error {
	if plan != config.PlanFree && plan != config.PlanPro {
		return invalid("plan must be %q or %q", config.PlanFree, config.PlanPro)
	}
	return nil
}

// CreateUser makes an account, for POST /v1/admin/users and `herald user
// add` alike: one rule for the email, the name, the plan and the password.
// An empty plan is the server's default plan. The first account of a
// server with no users is an administrator whatever in.Admin says (the
// returned user says so): someone must be able to reach the admin pages,
// and only the operator can make the first account.
func (s *Service) CreateUser(ctx context.Context, in NewUser) (*store.User, error) {
	email := strings.TrimSpace(in.Email)
	if err := checkEmail(email); err != nil {
		return nil, err
	}
	if utf8.RuneCountInString(in.Name) > 100 {
		return nil, invalid("name is longer than 100 characters")
	}
	plan := in.Plan
	if plan == "" {
		plan = s.opts.DefaultPlan
	}
	if err := checkPlan(plan); err != nil {
		return nil, err
	}
	var hash string
	if !in.NoPassword {
		if err := checkPassword("password", in.Password); err != nil {
			return nil, err
		}
		var err error
		if hash, err = auth.HashPassword(ctx, in.Password); err != nil {
			return nil, fmt.Errorf("service: create user: %w", err)
		}
	}
	u := &store.User{Email: email, Name: strings.TrimSpace(in.Name), Plan: plan, IsAdmin: in.Admin, PasswordHash: hash}
	if err := s.st.CreateUserFirstAdmin(ctx, u); errors.Is(err, store.ErrConflict) {
		return nil, conflict("email_taken", "a user with this email already exists")
	} else if err != nil {
		return nil, err
	}
	return u, nil
}

// SetPlan changes a user's plan.
func (s *Service) SetPlan(ctx context.Context, userID, plan string) error {
	if err := checkPlan(plan); err != nil {
		return err
	}
	return s.st.SetUserPlan(ctx, userID, plan)
}

// SetAdmin grants or revokes a user's administrator role. by is the
// administrator who asks, or nil for the operator at the command line. An
// administrator cannot revoke their own role, a slip of the mouse (another
// administrator, or the command line, can); and nobody can revoke the only
// administrator's, which would leave the admin pages out of everyone's
// reach.
func (s *Service) SetAdmin(ctx context.Context, by *store.User, userID string, admin bool) error {
	if admin {
		return s.st.SetUserAdmin(ctx, userID, true)
	}
	if by != nil && by.ID == userID {
		return forbidden("you cannot revoke your own administrator role; ask another administrator")
	}
	if err := s.st.RevokeAdmin(ctx, userID); errors.Is(err, store.ErrLastAdmin) {
		return forbidden("this user is the only administrator; make another user an administrator first")
	} else if err != nil {
		return err
	}
	return nil
}

// SignInOIDC finds or creates the user of a verified identity (see
// store.SignInOIDC). A sign-up on a server with no users makes the first
// account, an administrator as CreateUser's first account is, unless the
// provider decides who is an administrator with its admin claim.
func (s *Service) SignInOIDC(ctx context.Context, in store.OIDCSignIn) (*store.User, bool, error) {
	in.FirstAdmin = !in.AdminManaged
	return s.st.SignInOIDC(ctx, in)
}

// ResetPassword sets a user's local password and ends all their sessions.
func (s *Service) ResetPassword(ctx context.Context, userID, password string) error {
	if err := checkPassword("password", password); err != nil {
		return err
	}
	hash, err := auth.HashPassword(ctx, password)
	if err != nil {
		return fmt.Errorf("service: reset password: %w", err)
	}
	return s.st.SetUserPassword(ctx, userID, hash, "")
}

// DeleteUser deletes another user's account and everything it owns. by is
// the administrator who asks, or nil for the operator at the command line.
// An administrator deletes their own account from the account page instead.
func (s *Service) DeleteUser(ctx context.Context, by *store.User, userID string) error {
	if by != nil && by.ID == userID {
		return forbidden("delete your own account from your account page, not from the users page")
	}
	return s.st.DeleteUser(ctx, userID)
}

// DeleteAccount deletes the signed-in user's own account and everything it
// owns (DELETE /v1/auth/user).
func (s *Service) DeleteAccount(ctx context.Context, who *store.User) error {
	return s.st.DeleteUser(ctx, who.ID)
}

// ChangePassword replaces who's local password after checking the current
// one. The session that asked (keepSession) stays signed in; every other
// session ends. Accounts that sign in only through OIDC have no password to
// change.
func (s *Service) ChangePassword(ctx context.Context, who *store.User, keepSession, current, next string) error {
	if who.PasswordHash == "" {
		return forbidden("this account signs in through an identity provider and has no password here")
	}
	ok, err := auth.CheckPassword(ctx, who.PasswordHash, current)
	if err != nil {
		return fmt.Errorf("service: change password: %w", err)
	}
	if !ok {
		return invalid("current_password is not your current password")
	}
	if err := checkPassword("new_password", next); err != nil {
		return err
	}
	hash, err := auth.HashPassword(ctx, next)
	if err != nil {
		return fmt.Errorf("service: change password: %w", err)
	}
	return s.st.SetUserPassword(ctx, who.ID, hash, keepSession)
}
