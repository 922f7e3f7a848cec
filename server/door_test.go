package server

import (
	"fmt"
	"testing"

	"github.com/heraldhq/herald/internal/storecalls"
)

// storeReadBudget is how many distinct store methods the server may use.
// Each is a read: a listing a handler renders as it is, or a read of the
// event feed for the live streams. A read that is really a rule (who may
// see what, whether a credential works) belongs to the service, and so
// does every write. Lowering the budget is welcome; raising it needs a
// reason the service cannot be.
const storeReadBudget = 24

// TestServerStoreCalls keeps the server to its side of the store: it
// type-checks the package's own code and fails when it uses a store
// method that writes (found from the store's source: whatever reaches the
// writer, or says it writes by its name), or more distinct methods than
// the budget.
func TestServerStoreCalls(t *testing.T) {
	calls, writes, err := storecalls.Check(".", "../store", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range writes {
		t.Errorf("the server calls store.%s, which writes, at %v: writes go through service", m, calls[m])
	}
	if len(calls) > storeReadBudget {
		t.Errorf("the server uses %d store methods, over its budget of %d: %v", len(calls), storeReadBudget,
			fmt.Sprint(storecalls.Sorted(calls)))
	}
}
