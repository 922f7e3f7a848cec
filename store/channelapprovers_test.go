package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"testing"
)

// acceptApprovers gives channel ch a rule (one approval within an hour)
// naming users by id, and has each of them accept it: approvers who
// consented, whose devices, streams and lists the channel's messages reach.
func acceptApprovers(t testing.TB, s *Store, ch *Channel, users ...*User) {
	t.Helper()
	ctx := context.Background()
	ids := make([]string, len(users))
	for i, u := range users {
		ids[i] = u.ID
	}
	rule := &ApprovalRule{RequiredCount: 1, Approvers: ids, WindowSeconds: 3600}
	if _, err := s.UpdateChannel(ctx, ch.UserID, ch.ID, ChannelPatch{Approval: Optional[ApprovalRule]{Set: true, Value: rule}}); err != nil {
		t.Fatal(err)
	}
	for _, u := range users {
		if u.ID == ch.UserID {
			continue // the owner naming themselves has consented
		}
		invs, err := s.Invitations(ctx, u.ID, u.Email)
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range invs {
			if in.ChannelID == ch.ID {
				if _, err := s.AnswerInvitation(ctx, u.ID, u.Email, in.ID, true); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// storeAt makes the database dsn names, with the migrations up to and
// including version upTo applied, as a herald of that version left it,
// and returns a connection to it for a test's own SQL ($1 placeholders,
// which SQLite reads too).
func storeAt(t *testing.T, dsn string, upTo int) *sql.DB {
	t.Helper()
	driver, dir, open := "sqlite", "migrations/sqlite", "file:"+dsn+"?_pragma=foreign_keys(1)"
	if IsPostgresURL(dsn) {
		driver, dir, open = "pgx", "migrations/postgres", dsn
	}
	list, err := loadMigrations(dir)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open(driver, open)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TABLE schema_migrations (
		version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for _, m := range list {
		if m.version > upTo {
			break
		}
		if _, err := db.Exec(m.sql); err != nil {
			t.Fatalf("%s: %v", m.name, err)
		}
		if _, err := db.Exec("INSERT INTO schema_migrations VALUES ($1, $2, 0)", m.version, m.name); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// TestMigrationKeepsApprovers: a database whose approval rules held user
// ids, migrated, keeps those approvers as having accepted: the next
// message reaches them as before. An id whose account is gone is only
// invited.
func TestMigrationKeepsApprovers(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		db := storeAt(t, dsn, 22)
		for _, u := range []string{"usr_ann", "usr_bob", "usr_cat"} {
			if _, err := db.Exec("INSERT INTO users (id, email, created_at) VALUES ($1, $2, 1)", u, u[4:]+"@example.com"); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := db.Exec(`INSERT INTO channels (id, user_id, name, webhook_token, webhook_secret, approval, created_at, updated_at)
			VALUES ('ch_1', 'usr_ann', 'deploys', 'tok1', 'sec1', $1, 1, 2)`,
			`{"required_count":2,"approvers":["usr_bob","usr_ann","usr_gone"],"window_seconds":600}`); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`INSERT INTO channels (id, user_id, name, webhook_token, webhook_secret, created_at, updated_at)
			VALUES ('ch_2', 'usr_ann', 'plain', 'tok2', 'sec2', 1, 1)`); err != nil {
			t.Fatal(err)
		}
		db.Close()

		s, err := Open(ctx, dsn, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		got, err := s.ChannelApprovers(ctx, "ch_1")
		if err != nil {
			t.Fatal(err)
		}
		want := []ChannelApprover{
			{Entry: "usr_bob", State: InviteAccepted, UserID: "usr_bob", Email: "bob@example.com"},
			{Entry: "usr_ann", State: InviteAccepted, UserID: "usr_ann", Email: "ann@example.com"},
			{Entry: "usr_gone", State: InviteInvited},
		}
		if !slices.Equal(got, want) {
			t.Fatalf("approvers after migrating: %+v, want %+v", got, want)
		}
		if got, err := s.ChannelApprovers(ctx, "ch_2"); err != nil || len(got) != 0 {
			t.Fatalf("a channel without a rule has approvers %+v (%v)", got, err)
		}

		// The rule as it was, and a message sent under it reaches Bob.
		ch, err := s.ChannelByID(ctx, "ch_1")
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(ch.Approval.Approvers) != "[usr_bob usr_ann usr_gone]" {
			t.Fatalf("rule after migrating: %+v", ch.Approval)
		}
		m := &Message{ChannelID: ch.ID, Title: "Deploy?", Priority: "normal", Approval: ch.Approval}
		if err := s.CreateMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
		for _, u := range []string{"usr_bob", "usr_ann"} {
			events, err := s.EventsAfter(ctx, u, 0, 10)
			if err != nil || len(events) != 1 || events[0].MessageID != m.ID {
				t.Errorf("%s's events: %+v (%v), want the message's", u, events, err)
			}
		}
		if ok, err := s.ApproverOf(ctx, "usr_bob", ch.ID); err != nil || !ok {
			t.Errorf("bob does not list the channel's message: %v", err)
		}
		if ok, err := s.ApproverOf(ctx, "usr_cat", ch.ID); err != nil || ok {
			t.Errorf("cat, not named, lists the channel's message (%v)", err)
		}
	})
}

// TestInvitationsByEmail: an invitation by address reaches the account
// with that verified address, made before or after the rule, and no other;
// one by id reaches that account. Accepting lists the channel's earlier
// messages that name them; declining takes them off the list.
func TestInvitationsByEmail(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := openFoundation(t, dsn, Options{})
		user := func(email string) *User {
			u := &User{Email: email, Plan: "free"}
			if err := s.CreateUser(ctx, u); err != nil {
				t.Fatal(err)
			}
			return u
		}
		ann, bob, eve := user("ann@example.com"), user("Bob@Example.com"), user("eve@example.com")
		ch := &Channel{UserID: ann.ID, Name: "deploys"}
		if err := s.CreateChannel(ctx, ch); err != nil {
			t.Fatal(err)
		}
		rule := &ApprovalRule{RequiredCount: 1, Approvers: []string{"bob@example.com", "cat@example.com", eve.ID}, WindowSeconds: 60}
		if _, err := s.UpdateChannel(ctx, ann.ID, ch.ID, ChannelPatch{Approval: Optional[ApprovalRule]{Set: true, Value: rule}}); err != nil {
			t.Fatal(err)
		}
		m := &Message{ChannelID: ch.ID, Title: "Deploy?", Priority: "normal", Approval: rule}
		if err := s.CreateMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
		invited := func(u *User) []string {
			t.Helper()
			invs, err := s.Invitations(ctx, u.ID, u.Email)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, in := range invs {
				if in.Channel != "deploys" || in.OwnerEmail != "ann@example.com" {
					t.Errorf("invitation %+v", in)
				}
				out = append(out, in.Entry+" "+in.State)
			}
			return out
		}
		if got := invited(bob); fmt.Sprint(got) != "[bob@example.com invited]" {
			t.Errorf("bob's invitations %q", got)
		}
		if got := invited(eve); fmt.Sprint(got) != "["+eve.ID+" invited]" {
			t.Errorf("eve's invitations %q", got)
		}
		if got := invited(ann); len(got) != 0 {
			t.Errorf("ann is invited to her own channel: %q", got)
		}
		// An account made later with the address gets it; one whose
		// address was never verified does not.
		cat := user("cat@example.com")
		if _, err := s.write.Exec("UPDATE users SET email_verified = 0 WHERE id = ?", cat.ID); err != nil {
			t.Fatal(err)
		}
		if got := invited(cat); len(got) != 0 {
			t.Errorf("an unverified address gets invitations %q", got)
		}
		if _, err := s.write.Exec("UPDATE users SET email_verified = 1 WHERE id = ?", cat.ID); err != nil {
			t.Fatal(err)
		}
		if got := invited(cat); fmt.Sprint(got) != "[cat@example.com invited]" {
			t.Errorf("cat's invitations %q", got)
		}

		invs, _ := s.Invitations(ctx, bob.ID, bob.Email)
		if _, err := s.AnswerInvitation(ctx, eve.ID, eve.Email, invs[0].ID, true); err == nil {
			t.Fatal("eve accepted bob's invitation")
		}
		if ok, _ := s.ApproverOf(ctx, bob.ID, ch.ID); ok {
			t.Fatal("bob lists the channel before accepting")
		}
		if _, err := s.AnswerInvitation(ctx, bob.ID, bob.Email, invs[0].ID, true); err != nil {
			t.Fatal(err)
		}
		if ok, _ := s.ApproverOf(ctx, bob.ID, ch.ID); !ok {
			t.Fatal("bob does not list the message sent before he accepted")
		}
		if _, err := s.AnswerInvitation(ctx, bob.ID, bob.Email, invs[0].ID, false); err != nil {
			t.Fatal(err)
		}
		if ok, _ := s.ApproverOf(ctx, bob.ID, ch.ID); ok {
			t.Fatal("bob lists the channel after declining")
		}
		if st, err := s.ApproverStanding(ctx, ch.ID, bob.ID); err != nil || !st.Declined || !st.EmailVerified {
			t.Fatalf("bob's standing %+v (%v), want declined, verified", st, err)
		}
	})
}

// TestSearchKeepsToAcceptedApprovers: the search index holds a rule as
// written, yet a search finds (and counts) an approval message for an
// approver only once they accepted, by id or by address, in one channel
// or in all.
func TestSearchKeepsToAcceptedApprovers(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := openFoundation(t, dsn, Options{})
		ann, bob := &User{Email: "ann@example.com", Plan: "free"}, &User{Email: "bob@example.com", Plan: "free"}
		for _, u := range []*User{ann, bob} {
			if err := s.CreateUser(ctx, u); err != nil {
				t.Fatal(err)
			}
		}
		ch := &Channel{UserID: ann.ID, Name: "deploys"}
		if err := s.CreateChannel(ctx, ch); err != nil {
			t.Fatal(err)
		}
		rule := &ApprovalRule{RequiredCount: 1, Approvers: []string{"bob@example.com"}, WindowSeconds: 60}
		if _, err := s.UpdateChannel(ctx, ann.ID, ch.ID, ChannelPatch{Approval: Optional[ApprovalRule]{Set: true, Value: rule}}); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if err := s.CreateMessage(ctx, &Message{ChannelID: ch.ID, Title: "zebra crossing", Priority: "normal", Approval: rule}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.IndexForSearch(ctx, 1000); err != nil {
			t.Fatal(err)
		}
		found := func() []int {
			t.Helper()
			var out []int
			for _, q := range []MessageQuery{
				{UserID: bob.ID, Approver: bob.ID, ChannelID: ch.ID},
				{UserID: bob.ID, Approver: bob.ID},
				{UserID: bob.ID},
			} {
				q.Search, q.ReaderEmail, q.Limit = "zebra", "bob@example.com", 2
				page, err := s.ListMessages(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, len(page.Messages), page.Total)
			}
			return out
		}
		if got := found(); fmt.Sprint(got) != "[0 0 0 0 0 0]" {
			t.Fatalf("before accepting, bob's searches find and count %v, want nothing", got)
		}
		invs, err := s.Invitations(ctx, bob.ID, bob.Email)
		if err != nil || len(invs) != 1 {
			t.Fatalf("bob's invitations %+v (%v)", invs, err)
		}
		if _, err := s.AnswerInvitation(ctx, bob.ID, bob.Email, invs[0].ID, true); err != nil {
			t.Fatal(err)
		}
		if got := found(); fmt.Sprint(got) != "[2 3 2 3 2 3]" {
			t.Fatalf("after accepting, bob's searches find and count %v, want 2 of 3 each", got)
		}
	})
}
