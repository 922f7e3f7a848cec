package web_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/heraldhq/herald/store"
)

// TestUIListsFollowPages: a list longer than one page (500 rows) is shown
// whole: the admin UI follows next_cursor. Here, the users of a server with
// more users than a page holds.
func TestUIListsFollowPages(t *testing.T) {
	e, b, ada := setup(t)
	ctx := context.Background()
	if err := e.st.SetUserAdmin(ctx, ada.ID, true); err != nil {
		t.Fatal(err)
	}
	const more = 510
	errs := make([]error, more)
	var wg sync.WaitGroup
	for i := range more {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = e.st.CreateUser(ctx, &store.User{Email: fmt.Sprintf("u%03d@example.com", i), Plan: "free"})
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	b.signIn(adaEmail, adaPassword)
	b.openView("users")
	rows := `document.querySelectorAll("table#users tbody tr").length`
	b.waitFor("every user's row", rows+` === `+strconv.Itoa(more+1)+` && `+loaded())
	if !b.shown(`table#users tbody tr[data-email="u509@example.com"]`) {
		t.Error("the last user, on the second page, is not shown")
	}
}
