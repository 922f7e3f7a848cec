package store

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// listFixture is a database with two users, several channels and many
// messages, built in a few statements.
type listFixture struct {
	s          *Store
	ann, bob   *User
	big, small *Channel // ann's
	approvals  *Channel // ann's, bob approves half of its messages
	bobs       *Channel // bob's own
}

// fillTitled inserts n messages into a channel, titled with prefix and
// their number, with every seventh body mentioning "kubernetes". approver,
// if set, is named by the rule of every other message.
func fillTitled(t testing.TB, s *Store, ch *Channel, n int, prefix, approver string) {
	t.Helper()
	err := s.update(context.Background(), func(tx *writeTx) error {
		q := `WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < ?1)
			INSERT INTO messages (id, channel_id, title, body, priority, actions, callback_url, muted, state, created_at, approval)
			SELECT printf('msg_%s_%08d', ?2, i), ?2, ?3 || ' ' || i,
				CASE WHEN i % 7 = 0 THEN 'pods restarted on kubernetes node ' || i ELSE 'all fine ' || i END,
				'normal', '[]', NULL, 1, 'pending', i,
				CASE WHEN ?4 != '' AND i % 2 = 0 THEN json_object('required_count', 1, 'approvers', json_array(?4), 'window_seconds', 3600) END
			FROM seq`
		if onPostgres(s) {
			q = `INSERT INTO messages (id, channel_id, title, body, priority, actions, callback_url, muted, state, created_at, approval)
			SELECT 'msg_' || ?2 || '_' || lpad(i::text, 8, '0'), ?2, ?3 || ' ' || i,
				CASE WHEN i % 7 = 0 THEN 'pods restarted on kubernetes node ' || i ELSE 'all fine ' || i END,
				'normal', '[]', NULL, 1, 'pending', i,
				CASE WHEN ?4 != '' AND i % 2 = 0 THEN json_build_object('required_count', 1, 'approvers', json_build_array(?4::text), 'window_seconds', 3600)::text END
			FROM generate_series(1, ?1::int) AS seq(i)`
		}
		_, err := tx.Exec(q, n, ch.ID, prefix, approver)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func newListFixture(t *testing.T, dsn string, bigN int) *listFixture {
	t.Helper()
	ctx := context.Background()
	f := &listFixture{s: openFoundation(t, dsn, Options{})}
	f.ann, f.bob = &User{Email: "ann@example.com", Plan: "free"}, &User{Email: "bob@example.com", Plan: "free"}
	for _, u := range []*User{f.ann, f.bob} {
		if err := f.s.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	mk := func(u *User, name string) *Channel {
		c := &Channel{UserID: u.ID, Name: name}
		if err := f.s.CreateChannel(ctx, c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	f.big, f.small, f.approvals, f.bobs = mk(f.ann, "big"), mk(f.ann, "small"), mk(f.ann, "deploys"), mk(f.bob, "bob's")
	fillTitled(t, f.s, f.big, bigN, "Backup", "")
	fillTitled(t, f.s, f.small, 250, "Disk", "")
	acceptApprovers(t, f.s, f.approvals, f.bob)
	fillTitled(t, f.s, f.approvals, 300, "Deploy", f.bob.ID)
	fillTitled(t, f.s, f.bobs, 500, "Backup", "")
	for {
		n, err := f.s.IndexForSearch(ctx, 50000)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	return f
}

// pageAll walks q to its end by cursor and returns the titles in order.
func pageAll(t *testing.T, s *Store, q MessageQuery) []string {
	t.Helper()
	var titles []string
	for pages := 0; ; pages++ {
		if pages > 10000 {
			t.Fatal("paging does not end")
		}
		page, err := s.ListMessages(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range page.Messages {
			titles = append(titles, m.Title)
		}
		if page.Next == 0 {
			return titles
		}
		q.Before = page.Next
	}
}

func TestListMessagesPaging(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, dsn string) {
		f := newListFixture(t, dsn, 10500)
		ctx := context.Background()

		// A channel, page by page: every message once, newest first.
		titles := pageAll(t, f.s, MessageQuery{UserID: f.ann.ID, ChannelID: f.small.ID, Limit: 60})
		if len(titles) != 250 || titles[0] != "Disk 250" || titles[249] != "Disk 1" {
			t.Fatalf("small channel: %d titles, %q .. %q", len(titles), titles[0], titles[len(titles)-1])
		}
		for i, title := range titles {
			if want := fmt.Sprintf("Disk %d", 250-i); title != want {
				t.Fatalf("title %d = %q, want %q", i, title, want)
			}
		}

		// All of a user's channels merge by commit order; other users' stay out.
		all := pageAll(t, f.s, MessageQuery{UserID: f.ann.ID, Limit: 200})
		if len(all) != 10500+250+300 {
			t.Fatalf("ann's list has %d messages, want %d", len(all), 11050)
		}
		if all[0] != "Deploy 300" || all[len(all)-1] != "Backup 1" {
			t.Fatalf("ann's list runs %q .. %q", all[0], all[len(all)-1])
		}

		// Offset still works, and agrees with the cursor.
		page, err := f.s.ListMessages(ctx, MessageQuery{UserID: f.ann.ID, Limit: 5, Offset: 310})
		if err != nil {
			t.Fatal(err)
		}
		if got := page.Messages[0].Title; got != all[310] {
			t.Fatalf("offset 310 starts at %q, want %q", got, all[310])
		}

		// Totals: exact for small lists, capped for large ones.
		for _, tc := range []struct {
			q     MessageQuery
			total int
			exact bool
		}{
			{MessageQuery{UserID: f.ann.ID, ChannelID: f.small.ID, Limit: 1}, 250, true},
			{MessageQuery{UserID: f.ann.ID, ChannelID: f.big.ID, Limit: 1}, TotalCap, false},
			{MessageQuery{UserID: f.ann.ID, Limit: 1}, TotalCap, false},
			{MessageQuery{UserID: f.bob.ID, ChannelID: f.approvals.ID, Approver: f.bob.ID, Limit: 1}, 150, true},
		} {
			page, err := f.s.ListMessages(ctx, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if page.Total != tc.total || page.TotalExact != tc.exact {
				t.Errorf("%+v: total %d exact %v, want %d %v", tc.q, page.Total, page.TotalExact, tc.total, tc.exact)
			}
		}

		// The approver's view: exactly the messages whose rule names them.
		mine := pageAll(t, f.s, MessageQuery{UserID: f.bob.ID, ChannelID: f.approvals.ID, Approver: f.bob.ID, Limit: 40})
		if len(mine) != 150 || mine[0] != "Deploy 300" || mine[149] != "Deploy 2" {
			t.Fatalf("approver's list: %d, %q .. %q", len(mine), mine[0], mine[len(mine)-1])
		}
	})
}

// TestListQueryPlans checks that every list walks an index from its cursor
// and sorts nothing: the cost of a page does not grow with the table.
func TestListQueryPlans(t *testing.T) {
	t.Parallel()
	f := newListFixture(t, filepath.Join(t.TempDir(), "herald.db"), 2000)
	for name, q := range map[string]string{
		"channel":  `SELECT rowid FROM messages WHERE channel_id = 'x' AND rowid < 5 ORDER BY rowid DESC LIMIT 51`,
		"approver": `SELECT position FROM message_approvers WHERE user_id = 'u' AND channel_id = 'x' AND position < 5 ORDER BY position DESC LIMIT 51`,
		"page":     "SELECT " + messageCols + messageFrom + "WHERE m.rowid IN (1, 2, 3) ORDER BY m.rowid DESC",
		"approver by state": `SELECT a.position FROM message_approvers a JOIN messages m ON m.rowid = a.position
			WHERE a.user_id = 'u' AND a.channel_id = 'x' AND (m.state = 'a' OR m.state = 'b') AND a.position < 5 ORDER BY a.position DESC LIMIT 51`,
		"approved channels": `WITH RECURSIVE c(id) AS (
			SELECT (SELECT MIN(channel_id) FROM message_approvers WHERE user_id = 'u')
			UNION ALL
			SELECT (SELECT MIN(channel_id) FROM message_approvers WHERE user_id = 'u' AND channel_id > c.id) FROM c WHERE c.id IS NOT NULL
		) SELECT id FROM c WHERE id IS NOT NULL`,
	} {
		checkPlan(t, f.s, name, q)
	}
	// A channel's walks of each state filter, as the store writes them:
	// pending follows the channel's index; the states a message reaches
	// when answered follow the index of answered messages, which a send
	// leaves alone.
	for _, state := range ListStates {
		conds, err := stateConds(state, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range channelWalks("x", conds) {
			name := "channel by state " + state
			checkPlan(t, f.s, name, w.list, append(w.args, 5, 51, 0)...)
			if state != StatePending && state != StateScheduled {
				checkPlanUses(t, f.s, name, "messages_channel_answered", w.list, append(w.args, 5, 51, 0)...)
			}
		}
	}
	// Searches, as the store writes them.
	all, err := stateConds("", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	pending, err := stateConds(StatePending, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for name, q := range map[string]MessageQuery{
		"search":             {UserID: "u", Search: "backup"},
		"search a channel":   {UserID: "u", ChannelID: "x", Search: "backup"},
		"search as approver": {UserID: "u", Approver: "u", Search: "backup"},
	} {
		for _, c := range [][]stateCond{all, pending} {
			walks, err := f.s.searchWalksSQLite(q, c)
			if err != nil || len(walks) != 1 {
				t.Fatalf("%s: %d walks, %v", name, len(walks), err)
			}
			checkPlan(t, f.s, name, walks[0].list, append(walks[0].args, 5, 51, 0)...)
		}
	}
}

// checkPlan fails t when q's plan scans a table or sorts; a search must go
// through the full-text index.
func checkPlan(t *testing.T, s *Store, name, q string, args ...any) {
	t.Helper()
	joined := queryPlan(t, s, name, q, args...)
	if strings.HasPrefix(name, "search") {
		// A virtual table always "scans": through its full-text index,
		// with the MATCH (M) and the cursor (<) handed to it.
		if !strings.Contains(joined, "VIRTUAL TABLE INDEX") || !strings.Contains(joined, ":M") {
			t.Errorf("%s: plan %q does not use the full-text index", name, joined)
		}
		joined = strings.ReplaceAll(joined, "SCAN f VIRTUAL TABLE", "")
	}
	if strings.Contains(joined, "TEMP B-TREE") || strings.Contains(joined, "SCAN m ") || strings.HasSuffix(joined, "SCAN m") ||
		strings.Contains(joined, "SCAN messages") || strings.Contains(joined, "SCAN message_approvers") ||
		strings.HasPrefix(name, "search") && (strings.Contains(joined, "SCAN c") || strings.Contains(joined, "SCAN a")) {
		t.Errorf("%s: plan %q scans or sorts", name, joined)
	}
}

func TestSearchMessages(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, dsn string) {
		f := newListFixture(t, dsn, 700)
		ctx := context.Background()
		search := func(q MessageQuery) []string {
			t.Helper()
			q.Limit = 50
			return pageAll(t, f.s, q)
		}

		// Words by prefix, case-insensitive, in title or body; readers only.
		got := search(MessageQuery{UserID: f.ann.ID, Search: "KUBER*"})
		if want := 700/7 + 250/7 + 300/7; len(got) != want {
			t.Fatalf("ann's kubernetes search: %d results, want %d", len(got), want)
		}
		if got := search(MessageQuery{UserID: f.ann.ID, Search: "Kubernetes"}); len(got) != 700/7+250/7+300/7 {
			t.Fatalf("whole-word search found %d", len(got))
		}
		if got := search(MessageQuery{UserID: f.ann.ID, Search: "kuber"}); len(got) != 0 {
			t.Fatalf("a word's start without * found %d", len(got))
		}
		if got := search(MessageQuery{UserID: f.ann.ID, Search: "ku*"}); len(got) != 0 {
			t.Fatalf("a 2-character start found %d; starts need 3", len(got))
		}
		if got := search(MessageQuery{UserID: f.ann.ID, Search: "backup 699"}); len(got) != 1 || got[0] != "Backup 699" {
			t.Fatalf(`"backup 699" found %q, want ann's message only`, got)
		}
		if got := search(MessageQuery{UserID: f.bob.ID, Search: "backup 499"}); len(got) != 1 {
			t.Fatalf(`bob's "backup 499" found %q`, got)
		}
		if got := search(MessageQuery{UserID: f.bob.ID, Search: "backup 600"}); len(got) != 0 {
			t.Fatalf("bob finds ann's messages: %q", got)
		}
		// Within a channel; and an approver finds the messages they approve.
		if got := search(MessageQuery{UserID: f.ann.ID, ChannelID: f.small.ID, Search: "disk"}); len(got) != 250 {
			t.Fatalf("channel search found %d, want 250", len(got))
		}
		if got := search(MessageQuery{UserID: f.bob.ID, ChannelID: f.approvals.ID, Approver: f.bob.ID, Search: "deploy"}); len(got) != 150 {
			t.Fatalf("approver search found %d, want 150", len(got))
		}
		// Query syntax in the words is only text.
		for _, q := range []string{`"`, `backup OR disk`, `title:x`, `*`, `NEAR(a b)`, `a AND`} {
			if _, err := f.s.ListMessages(ctx, MessageQuery{UserID: f.ann.ID, Search: q, Limit: 5}); err != nil {
				t.Errorf("search %q: %v", q, err)
			}
		}

		// Deleting a message removes it from search at once; a new message in
		// its (reused) place is indexed by the next run (which on SQLite also
		// takes the deleted one out of the index: two steps).
		newest, err := f.s.ListMessages(ctx, MessageQuery{UserID: f.bob.ID, ChannelID: f.bobs.ID, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if err := f.s.DeleteMessage(ctx, f.bob.ID, newest.Messages[0].ID); err != nil {
			t.Fatal(err)
		}
		if got := search(MessageQuery{UserID: f.bob.ID, Search: "backup 500"}); len(got) != 0 {
			t.Fatalf("deleted message still found: %q", got)
		}
		m := &Message{ChannelID: f.bobs.ID, Title: "Zebra crossing", Priority: "normal"}
		if err := f.s.CreateMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
		if got := search(MessageQuery{UserID: f.bob.ID, Search: "zebra"}); len(got) != 0 {
			t.Fatalf("found before indexing: %q", got)
		}
		steps := 2
		if onPostgres(f.s) {
			steps = 1
		}
		if n, err := f.s.IndexForSearch(ctx, 100); err != nil || n != steps {
			t.Fatalf("IndexForSearch = %d, %v; want %d steps", n, err, steps)
		}
		if got := search(MessageQuery{UserID: f.bob.ID, Search: "zeb*"}); len(got) != 1 {
			t.Fatalf("new message in a reused place: found %q", got)
		}
	})
}

// TestSearchIndexForgetsEveryDeletedMessage deletes messages in every way
// there is (one message, retention, a channel, a user, before and after
// the indexer reached them) and checks the index itself, not only the
// search results: an entry left behind would be found again once its place
// (rowid) is reused by someone else's message.
func TestSearchIndexForgetsEveryDeletedMessage(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		f := newListFixture(t, dsn, 70)
		s := f.s
		indexed := func(word string) []int64 {
			t.Helper()
			var ids []int64
			q, args := "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?", []any{`"` + word + `"`}
			if onPostgres(s) {
				q, args = "SELECT rowid FROM messages_fts WHERE words @@ CAST(? AS tsquery) OR ? = ANY(readers)", []any{"'" + strings.ToLower(word) + "'", word}
			}
			rows, err := s.read.QueryContext(ctx, q, args...)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			for rows.Next() {
				var id int64
				if err := rows.Scan(&id); err != nil {
					t.Fatal(err)
				}
				ids = append(ids, id)
			}
			return ids
		}
		indexAll := func() {
			t.Helper()
			for {
				n, err := s.IndexForSearch(ctx, 1000)
				if err != nil {
					t.Fatal(err)
				}
				if n == 0 {
					return
				}
			}
		}
		send := func(ch *Channel, title string, approvers ...string) *Message {
			t.Helper()
			m := &Message{ChannelID: ch.ID, Title: title, Body: "body of " + title, Priority: "normal"}
			if len(approvers) > 0 {
				m.Approval = &ApprovalRule{RequiredCount: 1, Approvers: approvers, WindowSeconds: 3600}
			}
			if err := s.CreateMessage(ctx, m); err != nil {
				t.Fatal(err)
			}
			return m
		}
		mustGo := func(word string) {
			t.Helper()
			indexAll() // on SQLite the index learns of deletes from the indexer
			if got := indexed(word); len(got) != 0 {
				t.Fatalf("%q is still in the search index at %v", word, got)
			}
		}

		// One message, with approvers among its readers.
		one := send(f.approvals, "zebra", f.bob.ID)
		indexAll()
		if got := indexed("zebra"); len(got) != 1 {
			t.Fatalf("zebra indexed at %v", got)
		}
		if err := s.DeleteMessage(ctx, f.ann.ID, one.ID); err != nil {
			t.Fatal(err)
		}
		mustGo("zebra")
		mustGo("body")

		// Retention: the fixture's messages are from 1970.
		if n, err := s.DeleteMessagesBefore(ctx, time.UnixMilli(1e6)); err != nil || n == 0 {
			t.Fatalf("DeleteMessagesBefore = %d, %v", n, err)
		}
		mustGo("kubernetes")
		mustGo("deploy")
		if got := indexed(f.bob.ID); len(got) != 0 {
			t.Fatalf("bob is still a reader of %d entries", len(got))
		}

		// A channel, and a user with theirs.
		send(f.small, "okapi")
		carl := &User{Email: "carl@example.com", Plan: "free"}
		if err := s.CreateUser(ctx, carl); err != nil {
			t.Fatal(err)
		}
		carls := &Channel{UserID: carl.ID, Name: "carl's"}
		if err := s.CreateChannel(ctx, carls); err != nil {
			t.Fatal(err)
		}
		send(carls, "walrus", f.ann.ID)
		indexAll()
		if err := s.DeleteChannel(ctx, f.ann.ID, f.small.ID); err != nil {
			t.Fatal(err)
		}
		mustGo("okapi")
		if err := s.DeleteUser(ctx, carl.ID); err != nil {
			t.Fatal(err)
		}
		mustGo("walrus")
		mustGo(carl.ID)

		// A message deleted before the indexer reached it was never in the
		// index; its place, reused, is indexed with the new message's words.
		late := send(f.bobs, "narwhal")
		if err := s.DeleteMessage(ctx, f.bob.ID, late.ID); err != nil {
			t.Fatal(err)
		}
		send(f.bobs, "heron")
		indexAll()
		mustGo("narwhal")
		if got := indexed("heron"); len(got) != 1 {
			t.Fatalf("heron indexed at %v", got)
		}
		// The newest message goes (its place will be reused), and ann's next
		// message takes its place: bob does not find it by the old words.
		newest := send(f.bobs, "osprey")
		indexAll()
		if err := s.DeleteMessage(ctx, f.bob.ID, newest.ID); err != nil {
			t.Fatal(err)
		}
		send(f.big, "plain")
		for range 2 { // before the indexer has applied the delete, and after
			if got := pageAll(t, s, MessageQuery{UserID: f.bob.ID, Search: "osprey", Limit: 10}); len(got) != 0 {
				t.Fatalf("bob finds %q by a deleted message's word", got)
			}
			if got := pageAll(t, s, MessageQuery{UserID: f.bob.ID, ChannelID: f.bobs.ID, Search: "osprey", Limit: 10}); len(got) != 0 {
				t.Fatalf("bob finds %q in his channel by a deleted message's word", got)
			}
			indexAll()
		}
		if onPostgres(s) { // the index holds only messages that exist
			var orphans int
			if err := s.read.QueryRowContext(ctx, "SELECT count(*) FROM messages_fts WHERE rowid NOT IN (SELECT rowid FROM messages)").Scan(&orphans); err != nil || orphans != 0 {
				t.Fatalf("search index holds %d entries of deleted messages (%v)", orphans, err)
			}
		} else if _, err := s.search.ExecContext(ctx, "INSERT INTO messages_fts (messages_fts, rank) VALUES ('integrity-check', 0)"); err != nil {
			t.Fatalf("search index integrity: %v", err)
		}
	})
}

// TestListUserMessagesOffset: an offset into the list of all a user's
// channels counts across the channels, wherever their messages interleave.
func TestListUserMessagesOffset(t *testing.T) {
	ctx := context.Background()
	f := newPairFixture(t)
	other := &Channel{UserID: f.owner.ID, Name: "alerts"}
	if err := f.s.CreateChannel(ctx, other); err != nil {
		t.Fatal(err)
	}
	const n = 10
	var titles []string // newest first
	for i := range n {
		for _, ch := range []*Channel{f.channel, other} {
			m := &Message{ChannelID: ch.ID, Title: fmt.Sprintf("%s %d", ch.Name, i), Priority: "normal"}
			if err := f.s.CreateMessage(ctx, m); err != nil {
				t.Fatal(err)
			}
			titles = append([]string{m.Title}, titles...)
		}
	}
	for _, q := range []struct{ offset, limit int }{{0, 3}, {6, 2}, {13, 5}, {18, 4}, {20, 2}} {
		page, err := f.s.ListMessages(ctx, MessageQuery{UserID: f.owner.ID, Limit: q.limit, Offset: q.offset})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range page.Messages {
			got = append(got, m.Title)
		}
		want := titles[min(q.offset, len(titles)):min(q.offset+q.limit, len(titles))]
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("offset %d, limit %d: %q, want %q", q.offset, q.limit, got, want)
		}
		if page.Total != 2*n || !page.TotalExact {
			t.Errorf("offset %d, limit %d: total %d (exact %v), want %d", q.offset, q.limit, page.Total, page.TotalExact, 2*n)
		}
	}
}

// TestListUserMessagesTotalAtCap: a user's list whose first channels count
// exactly TotalCap messages still counts the next channel's, so that the
// total is reported as capped, not exact.
func TestListUserMessagesTotalAtCap(t *testing.T) {
	t.Parallel() // 20,000 rows: alongside the other tests
	ctx := context.Background()
	f := newPairFixture(t)
	other := &Channel{UserID: f.owner.ID, Name: "alerts"}
	if err := f.s.CreateChannel(ctx, other); err != nil {
		t.Fatal(err)
	}
	// Both channels hold TotalCap: whichever the walk counts first, the
	// total reaches the cap exactly before the second is counted.
	fillTitled(t, f.s, f.channel, TotalCap, "Deploy", "")
	fillTitled(t, f.s, other, TotalCap, "Alert", "")
	page, err := f.s.ListMessages(ctx, MessageQuery{UserID: f.owner.ID, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if page.Total != TotalCap || page.TotalExact {
		t.Errorf("user's list: total %d (exact %v), want %d, not exact", page.Total, page.TotalExact, TotalCap)
	}
	// One channel of exactly TotalCap is counted exactly.
	page, err = f.s.ListMessages(ctx, MessageQuery{UserID: f.owner.ID, ChannelID: other.ID, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if page.Total != TotalCap || !page.TotalExact {
		t.Errorf("channel's list: total %d (exact %v), want %d, exact", page.Total, page.TotalExact, TotalCap)
	}
}

// TestListMessagesLastPage: a page that ends the list has no cursor, even
// when it is full; an empty page (limit 0) has none either.
func TestListMessagesLastPage(t *testing.T) {
	ctx := context.Background()
	f := newPairFixture(t)
	const n = 5
	for i := range n {
		m := &Message{ChannelID: f.channel.ID, Title: fmt.Sprintf("m%d", i), Priority: "normal"}
		if err := f.s.CreateMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []struct {
		limit, messages int
		next            bool
	}{{n - 1, n - 1, true}, {n, n, false}, {n + 1, n, false}, {0, 0, false}} {
		for _, channel := range []string{f.channel.ID, ""} {
			page, err := f.s.ListMessages(ctx, MessageQuery{UserID: f.owner.ID, ChannelID: channel, Limit: q.limit})
			if err != nil {
				t.Fatalf("limit %d: %v", q.limit, err)
			}
			if len(page.Messages) != q.messages || (page.Next != 0) != q.next {
				t.Errorf("channel %q, limit %d: %d messages, next %d; want %d, a next page %v",
					channel, q.limit, len(page.Messages), page.Next, q.messages, q.next)
			}
		}
	}
}

// checkPlanUses fails t when q's plan does not walk index.
func checkPlanUses(t *testing.T, s *Store, name, index, q string, args ...any) {
	t.Helper()
	if plan := queryPlan(t, s, name, q, args...); !strings.Contains(plan, index) {
		t.Errorf("%s: plan %q does not walk %s", name, plan, index)
	}
}

// queryPlan is SQLite's plan of q, its steps joined by "; ".
func queryPlan(t *testing.T, s *Store, name, q string, args ...any) string {
	t.Helper()
	rows, err := s.read.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	return strings.Join(plan, "; ")
}
