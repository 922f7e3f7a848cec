// Package pgtest gives tests a PostgreSQL database of their own, on the
// server HERALD_TEST_DATABASE_URL names (any database on it that the role
// may connect to; each test gets a new database beside it, dropped at the
// end).
//
// Without the variable a test that needs PostgreSQL is skipped, and says
// so; under CI=true it fails instead, so that CI never passes without
// having run them.
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"

	"github.com/heraldhq/herald/internal/testkit"
)

// EnvURL names the variable that points the tests at a PostgreSQL server.
const EnvURL = "HERALD_TEST_DATABASE_URL"

// NewDatabase creates an empty database for t and returns its URL. It is
// dropped when t ends (after t's own Cleanups, which close the stores on
// it).
func NewDatabase(t testing.TB) string {
	t.Helper()
	admin := os.Getenv(EnvURL)
	if admin == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set: CI runs the PostgreSQL tests (see .ci/run)", EnvURL)
		}
		testkit.Skip(t, "no PostgreSQL: set "+EnvURL+" (see the README's Testing section)")
	}
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("%s: %v", EnvURL, err)
	}
	name := "herald_test_" + strings.ToLower(rand.Text()[:16])
	db, err := sql.Open("pgx", admin)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		db.Close()
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		defer db.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop test database %s: %v", name, err)
		}
	})
	u.Path = "/" + name
	return u.String()
}

// EnvAll names the variable that moves whole test suites onto PostgreSQL:
// with it set to 1, Or gives each test a PostgreSQL database instead of
// its SQLite file, so the tests written for SQLite check the same
// behaviour on PostgreSQL (CI runs the server and delivery tests a second
// time so).
const EnvAll = "HERALD_TEST_ALL_ON_POSTGRES"

// Or returns sqlitePath, or a new PostgreSQL database for t when EnvAll is 1.
func Or(t testing.TB, sqlitePath string) string {
	t.Helper()
	if os.Getenv(EnvAll) != "1" {
		return sqlitePath
	}
	return NewDatabase(t)
}

// SkipIfAll skips a test of SQLite-only behaviour when EnvAll moves the
// suite onto PostgreSQL, saying why it does not apply there.
func SkipIfAll(t testing.TB, why string) {
	t.Helper()
	if os.Getenv(EnvAll) == "1" {
		t.Skip("on PostgreSQL: " + why)
	}
}
