package store

import (
	"errors"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// ErrConflict is returned when a unique value (an email, say) is taken.
var ErrConflict = errors.New("store: already exists")

// ErrLastAdmin refuses to revoke the administrator role of the only
// administrator.
var ErrLastAdmin = errors.New("store: the only administrator")

// ErrLimit is returned when a per-user quota would be exceeded.
var ErrLimit = errors.New("store: limit reached")

// isUnique reports whether err is a UNIQUE or PRIMARY KEY violation.
func isUnique(err error) bool {
	if pgCode(err) == "23505" { // unique_violation
		return true
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	c := se.Code()
	return c == sqlite3.SQLITE_CONSTRAINT_UNIQUE || c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}

// isForeignKey reports whether err is a FOREIGN KEY violation: the row
// referred to is gone.
func isForeignKey(err error) bool {
	if err == nil {
		return false // without the errors.As below, whose targets escape
	}
	if pgCode(err) == "23503" { // foreign_key_violation
		return true
	}
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
}

// pgCode is the SQLSTATE of a PostgreSQL error, "" for any other error.
func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}
