package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// User is an account.
type User struct {
	ID           string
	Email        string
	Name         string
	Plan         string
	IsAdmin      bool
	PasswordHash string // empty: no local password
	CreatedAt    time.Time
}

const userCols = "u.id, u.email, u.name, u.plan, u.is_admin, COALESCE(u.password_hash, ''), u.created_at"

type scanner interface{ Scan(dest ...any) error }

func scanUser(row scanner, extra ...any) (*User, error) {
	var u User
	var created int64
	dest := append([]any{&u.ID, &u.Email, &u.Name, &u.Plan, &u.IsAdmin, &u.PasswordHash, &created}, extra...)
	if err := row.Scan(dest...); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, ErrNotFound
		}
		return nil, err
	}
	u.CreatedAt = fromMS(created)
	return &u, nil
}

// CreateUser inserts u, filling ID and CreatedAt. A taken email is ErrConflict.
func (s *Store) CreateUser(ctx context.Context, u *User) error {
	return s.createUser(ctx, u, false)
}

// CreateUserFirstAdmin is CreateUser that also makes u an administrator
// when no user exists yet. The check and the insert are one write, so of
// two first users made at once only one finds the server empty.
func (s *Store) CreateUserFirstAdmin(ctx context.Context, u *User) error {
	return s.createUser(ctx, u, true)
}

func (s *Store) createUser(ctx context.Context, u *User, firstAdmin bool) error {
	u.ID = NewID("usr_")
	u.CreatedAt = s.now().UTC().Truncate(time.Millisecond)
	u.Email = strings.TrimSpace(u.Email)
	var admin bool
	err := s.update(ctx, func(tx *writeTx) error {
		admin = u.IsAdmin
		if firstAdmin && !admin {
			first, err := noUsers(tx)
			if err != nil {
				return err
			}
			admin = first
		}
		if taken, err := emailTakenFolded(tx, u.Email); err != nil || taken {
			return cmp.Or(err, ErrConflict)
		}
		_, err := tx.Exec(`INSERT INTO users (id, email, name, plan, is_admin, password_hash, created_at)
			VALUES (?, ?, ?, ?, ?, NULLIF(?, ''), ?)`,
			u.ID, u.Email, u.Name, u.Plan, admin, u.PasswordHash, ms(u.CreatedAt))
		return err
	})
	if errors.Is(err, ErrConflict) || isUnique(err) {
		return fmt.Errorf("store: create user %s: %w", u.Email, ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("store: create user: %w", err)
	}
	u.IsAdmin = admin
	return nil
}

// emailTakenFolded reports, inside a write, whether an account's email is
// email in Unicode's lower case, as approval rules and escalation lists
// match addresses (strings.ToLower): SQLite's unique index ignores the
// case of ASCII letters only, so ÄRGER@ and ärger@, or a Kelvin sign's
// Kim@ and kim@, would be two accounts that one entry names. Accounts are
// few and made rarely: every address is compared.
func emailTakenFolded(tx *writeTx, email string) (bool, error) {
	rows, err := tx.Query("SELECT email FROM users")
	if err != nil {
		return false, err
	}
	defer rows.Close()
	folded := strings.ToLower(email)
	for rows.Next() {
		var e string
		if err := rows.Scan(&e); err != nil {
			return false, err
		}
		if strings.ToLower(e) == folded {
			return true, nil
		}
	}
	return false, rows.Err()
}

// noUsers reports, inside a write, whether the users table is empty.
func noUsers(tx *writeTx) (bool, error) {
	var exists bool
	if err := tx.QueryRow("SELECT EXISTS (SELECT 1 FROM users)").Scan(&exists); err != nil {
		return false, err
	}
	return !exists, nil
}

// UserByID returns a user.
func (s *Store) UserByID(ctx context.Context, id string) (*User, error) {
	u, err := scanUser(s.read.QueryRowContext(ctx, "SELECT "+userCols+" FROM users u WHERE u.id = ?", id))
	if err != nil {
		return nil, fmt.Errorf("store: user %s: %w", id, err)
	}
	return u, nil
}

// UserByEmail returns a user by email, case-insensitively.
func (s *Store) UserByEmail(ctx context.Context, email string) (*User, error) {
	col, arg := s.dialect.userEmail()
	u, err := scanUser(s.read.QueryRowContext(ctx, "SELECT "+userCols+" FROM users u WHERE "+col+" = "+arg, strings.TrimSpace(email)))
	if err != nil {
		return nil, fmt.Errorf("store: user by email: %w", err)
	}
	return u, nil
}

// UsersByIDs returns the users among ids that exist, in no particular order.
func (s *Store) UsersByIDs(ctx context.Context, ids []string) ([]User, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	q := "SELECT " + userCols + " FROM users u WHERE u.id IN (?" + strings.Repeat(",?", len(ids)-1) + ")"
	return s.queryUsers(ctx, q, args...)
}

// ListUsers returns every user, oldest first.
func (s *Store) ListUsers(ctx context.Context) ([]User, error) {
	return s.queryUsers(ctx, "SELECT "+userCols+" FROM users u ORDER BY u.created_at, u.id")
}

// ListUsersPage returns a page of the users, oldest first, and the cursor
// of the next page (zero on the last).
func (s *Store) ListUsersPage(ctx context.Context, p Page) ([]User, Cursor, error) {
	where, args, limit := p.clauses("u.created_at", "u.id")
	out, err := s.queryUsers(ctx, "SELECT "+userCols+" FROM users u WHERE TRUE"+where+" ORDER BY u.created_at, u.id"+limit, args...)
	if err != nil {
		return nil, Cursor{}, err
	}
	out, next := cut(out, p, func(u *User) Cursor { return Cursor{Key: ms(u.CreatedAt), ID: u.ID} })
	return out, next, nil
}

func (s *Store) queryUsers(ctx context.Context, q string, args ...any) ([]User, error) {
	rows, err := s.read.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list users: %w", err)
	}
	defer rows.Close()
	var out []User
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list users: %w", err)
		}
		out = append(out, *u)
	}
	return out, rows.Err()
}

// SetUserPlan changes a user's plan. It takes effect on the user's next request.
func (s *Store) SetUserPlan(ctx context.Context, id, plan string) error {
	defer s.tokens.invalidate()
	return s.updateOne(ctx, "set plan", "UPDATE users SET plan = ? WHERE id = ?", plan, id)
}

// SetUserAdmin sets or clears a user's admin flag.
func (s *Store) SetUserAdmin(ctx context.Context, id string, admin bool) error {
	return s.updateOne(ctx, "set admin", "UPDATE users SET is_admin = ? WHERE id = ?", admin, id)
}

// RevokeAdmin clears a user's admin flag unless the user is the only
// administrator (ErrLastAdmin). A user who is not an administrator is left
// as they are.
func (s *Store) RevokeAdmin(ctx context.Context, id string) error {
	err := s.update(ctx, func(tx *writeTx) error {
		res, err := tx.Exec(`UPDATE users SET is_admin = 0 WHERE id = ?1
			AND (is_admin = 0 OR EXISTS (SELECT 1 FROM users o WHERE o.is_admin = 1 AND o.id != ?1))`, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n > 0 {
			return err
		}
		var exists bool
		if err := tx.QueryRow("SELECT EXISTS (SELECT 1 FROM users WHERE id = ?)", id).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			return ErrNotFound
		}
		return ErrLastAdmin
	})
	if err != nil {
		return fmt.Errorf("store: revoke admin of %s: %w", id, err)
	}
	return nil
}

// DeleteUser deletes a user and, through foreign keys, everything they own:
// channels, messages, queued deliveries, keys, sessions, devices, folders and
// pins, all in one transaction. The other users who approve on their
// channels get a message.deleted event for each of those messages, as when
// a channel is deleted. The approval invitations they answered in other
// users' channels return to invited (the users_approvers_reset trigger):
// they vote no more, and whoever gets their address next is asked again;
// their votes on approvals still open are deleted with them.
func (s *Store) DeleteUser(ctx context.Context, id string) error {
	defer s.tokens.invalidate()
	err := s.update(ctx, func(tx *writeTx) error {
		res, err := tx.Exec(`INSERT INTO events (user_id, type, message_id, channel_id, created_at)
			SELECT a.user_id, ?2, m.id, m.channel_id, CAST(?3 AS BIGINT)
			FROM channels c JOIN messages m ON m.channel_id = c.id JOIN message_approvers a ON a.message_id = m.id
			WHERE c.user_id = ?1 AND m.approval IS NOT NULL AND a.user_id != ?1`, id, EventDeleted, ms(s.now()))
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n > 0 {
			s.wake.mark(TopicEvents)
		}
		// Their votes on approvals still open go too: whoever gets their
		// address next votes in their place, not beside them. A decided
		// approval keeps its votes, the record of who decided.
		if _, err := tx.Exec(`DELETE FROM votes WHERE user_id = ?1 AND message_id IN
			(SELECT id FROM messages WHERE approval IS NOT NULL AND approval_status IS NULL)`, id); err != nil {
			return err
		}
		return execOne(tx, "DELETE FROM users WHERE id = ?", id)
	})
	if err != nil {
		return fmt.Errorf("store: delete user %s: %w", id, err)
	}
	return nil
}

// updateOne runs a statement that must touch exactly one row; none is ErrNotFound.
func (s *Store) updateOne(ctx context.Context, op, q string, args ...any) error {
	err := s.update(ctx, func(tx *writeTx) error { return execOne(tx, q, args...) })
	if err != nil {
		return fmt.Errorf("store: %s: %w", op, err)
	}
	return nil
}

// execOne runs q in tx and returns ErrNotFound when it touched no row.
func execOne(tx *writeTx, q string, args ...any) error {
	res, err := tx.Exec(q, args...)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}
