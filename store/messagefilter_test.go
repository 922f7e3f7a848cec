package store

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

// setStates gives the messages of a channel states by their number i (the
// fixture's created_at): the state's status as shown to a user is
// statusOf(i). Answers submitted at 1000 are fresh, at 10 stale.
func setStates(t *testing.T, s *Store, ch *Channel) {
	t.Helper()
	err := s.update(context.Background(), func(tx *writeTx) error {
		_, err := tx.Exec(`UPDATE messages SET
			state = CASE WHEN created_at % 5 = 0 THEN 'submitted' WHEN created_at % 5 = 1 THEN 'already_read'
				WHEN created_at % 25 = 2 THEN 'expired' WHEN created_at % 25 = 4 THEN 'failed'
				WHEN created_at % 25 = 7 THEN 'submitted' ELSE 'pending' END,
			submitted_at = CASE WHEN created_at % 5 = 0 THEN 1000 WHEN created_at % 25 = 7 THEN 10 END
			WHERE channel_id = ?`, ch.ID)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// statusOf is the status setStates gives message i, with answers submitted
// at or before 500 expired.
func statusOf(i int) string {
	switch {
	case i%5 == 0:
		return StateSubmitted
	case i%5 == 1:
		return StateAlreadyRead
	case i%25 == 2, i%25 == 7:
		return StateExpired
	case i%25 == 4:
		return StateFailed
	}
	return StatePending
}

// wantTitles lists, newest first, the titles prefix+i of i in 1..n whose
// status the filter keeps.
func wantTitles(prefix string, n int, state string, keep func(i int) bool) []string {
	var out []string
	for i := n; i >= 1; i-- {
		st := statusOf(i)
		if keep != nil && !keep(i) {
			continue
		}
		if state == "" || st == state || state == StateAnswered && st != StatePending {
			out = append(out, fmt.Sprintf("%s %d", prefix, i))
		}
	}
	return out
}

// TestListMessagesByState pages every filter to its end, by cursor and by
// offset, in one channel, in all of a user's channels, in an approver's
// channel and in a search, and checks the totals.
func TestListMessagesByState(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, dsn string) {
		f := newListFixture(t, dsn, 400)
		ctx := context.Background()
		for _, ch := range []*Channel{f.big, f.small, f.approvals} {
			setStates(t, f.s, ch)
		}
		expired := time.UnixMilli(500)
		even := func(i int) bool { return i%2 == 0 }
		for _, state := range ListStates {
			t.Run(state, func(t *testing.T) {
				for _, tc := range []struct {
					name string
					q    MessageQuery
					want []string
				}{
					{"channel", MessageQuery{UserID: f.ann.ID, ChannelID: f.small.ID}, wantTitles("Disk", 250, state, nil)},
					{"approver", MessageQuery{UserID: f.bob.ID, ChannelID: f.approvals.ID, Approver: f.bob.ID}, wantTitles("Deploy", 300, state, even)},
					{"search", MessageQuery{UserID: f.ann.ID, ChannelID: f.small.ID, Search: "disk"}, wantTitles("Disk", 250, state, nil)},
				} {
					tc.q.State, tc.q.Expired, tc.q.Limit = state, expired, 7
					got := pageAll(t, f.s, tc.q)
					if !slices.Equal(got, tc.want) {
						t.Errorf("%s by cursor: %d titles %.60q, want %d %.60q", tc.name, len(got), got, len(tc.want), tc.want)
					}
					tc.q.Limit = 1000
					page, err := f.s.ListMessages(ctx, tc.q)
					if err != nil {
						t.Fatal(err)
					}
					if page.Total != len(tc.want) || !page.TotalExact {
						t.Errorf("%s: total %d (exact %v), want %d", tc.name, page.Total, page.TotalExact, len(tc.want))
					}
					if len(tc.want) > 9 {
						tc.q.Limit, tc.q.Offset = 3, 6
						page, err := f.s.ListMessages(ctx, tc.q)
						if err != nil {
							t.Fatal(err)
						}
						if len(page.Messages) != 3 || page.Messages[0].Title != tc.want[6] || page.Messages[2].Title != tc.want[8] {
							t.Errorf("%s at offset 6: %d messages, first %q, want %q", tc.name, len(page.Messages), page.Messages[0].Title, tc.want[6])
						}
					}
				}

				// All of ann's channels: the three merge newest first.
				var want []string
				for _, w := range [][]string{wantTitles("Backup", 400, state, nil), wantTitles("Disk", 250, state, nil), wantTitles("Deploy", 300, state, nil)} {
					want = append(want, w...)
				}
				got := pageAll(t, f.s, MessageQuery{UserID: f.ann.ID, State: state, Expired: expired, Limit: 50})
				if len(got) != len(want) {
					t.Fatalf("ann's list: %d messages, want %d", len(got), len(want))
				}
				slices.Sort(got)
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Errorf("ann's list holds other messages than the filter keeps")
				}
			})
		}
		if _, err := f.s.ListMessages(ctx, MessageQuery{UserID: f.ann.ID, State: "answerd", Limit: 5}); err == nil {
			t.Error("an unknown state lists messages")
		}
	})
}

// TestListMessagesOfApprover: an approver's list of every channel holds
// the messages whose rule names them, newest first across channels, and
// nothing of the channels they own or do not approve.
func TestListMessagesOfApprover(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, dsn string) {
		f := newListFixture(t, dsn, 100)
		ctx := context.Background()
		cy := &User{Email: "cy@example.com", Plan: "free"}
		if err := f.s.CreateUser(ctx, cy); err != nil {
			t.Fatal(err)
		}
		cys := &Channel{UserID: cy.ID, Name: "cy's"}
		if err := f.s.CreateChannel(ctx, cys); err != nil {
			t.Fatal(err)
		}
		acceptApprovers(t, f.s, cys, f.bob)
		fillTitled(t, f.s, cys, 40, "Release", f.bob.ID) // after ann's: newer
		if _, err := f.s.IndexForSearch(ctx, 50000); err != nil {
			t.Fatal(err)
		}
		want := append(wantTitles("Release", 40, "", func(i int) bool { return i%2 == 0 }),
			wantTitles("Deploy", 300, "", func(i int) bool { return i%2 == 0 })...)

		got := pageAll(t, f.s, MessageQuery{UserID: f.bob.ID, Approver: f.bob.ID, Limit: 30})
		if !slices.Equal(got, want) {
			t.Fatalf("bob's approvals: %d, %.80q; want %d, %.80q", len(got), got, len(want), want)
		}
		page, err := f.s.ListMessages(ctx, MessageQuery{UserID: f.bob.ID, Approver: f.bob.ID, Limit: 5, Offset: 18})
		if err != nil {
			t.Fatal(err)
		}
		if page.Total != 170 || !page.TotalExact || page.Messages[0].Title != want[18] || page.Messages[4].Title != want[22] {
			t.Errorf("offset 18: total %d, %q .. %q; want 170, %q .. %q", page.Total, page.Messages[0].Title, page.Messages[4].Title, want[18], want[22])
		}

		// A search in them: bob's own channel has kubernetes bodies too, and
		// stays out.
		got = pageAll(t, f.s, MessageQuery{UserID: f.bob.ID, Approver: f.bob.ID, Search: "kubernetes", Limit: 4})
		want = append(wantTitles("Release", 40, "", func(i int) bool { return i%14 == 0 }),
			wantTitles("Deploy", 300, "", func(i int) bool { return i%14 == 0 })...)
		if !slices.Equal(got, want) {
			t.Errorf("bob's approvals searched: %q, want %q", got, want)
		}

		// With a filter: the open ones.
		setStates(t, f.s, f.approvals)
		got = pageAll(t, f.s, MessageQuery{UserID: f.bob.ID, Approver: f.bob.ID, State: StateAnswered, Expired: time.UnixMilli(500), Limit: 9})
		want = wantTitles("Deploy", 300, StateAnswered, func(i int) bool { return i%2 == 0 })
		if !slices.Equal(got, want) {
			t.Errorf("bob's answered approvals: %d, want %d", len(got), len(want))
		}

		// Whoever approves nothing lists nothing, their own messages included.
		for _, u := range []*User{f.ann, cy} {
			page, err := f.s.ListMessages(ctx, MessageQuery{UserID: u.ID, Approver: u.ID, Limit: 50})
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Messages) != 0 || page.Total != 0 {
				t.Errorf("%s approves nothing, lists %d (total %d)", u.Email, len(page.Messages), page.Total)
			}
		}
	})
}
