package cli

import (
	"testing"

	"github.com/heraldhq/herald/internal/storecalls"
)

// maintenance are the store methods that look after the database as a
// file, not the data in it: `herald vacuum` (Vacuum) and `herald backup`
// (Backup). They hold no rule about users, channels or messages, so the
// command line calls them itself, as it opens and closes the store; and
// `herald migrate-data` copies a database whole through store/pgcopy.
// Everything else the command line changes (users, passwords, plans,
// admins, API keys) goes through service, whose rules the API shares.
var maintenance = map[string]bool{"Vacuum": true, "Backup": true}

// TestCLIStoreCalls keeps the command line to reads and database
// maintenance: it type-checks the package's own code and fails when it
// uses a store method that writes (see storecalls.Writes) and is not
// maintenance.
func TestCLIStoreCalls(t *testing.T) {
	calls, writes, err := storecalls.Check(".", "../store", maintenance)
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) == 0 {
		t.Fatal("no store calls found in the command line: it opens a store, at least")
	}
	for _, m := range writes {
		t.Errorf("the command line calls store.%s, which writes, at %v: writes go through service", m, calls[m])
	}
}
