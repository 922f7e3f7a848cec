package cli

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/pgtest"
	"github.com/heraldhq/herald/service"
	"github.com/heraldhq/herald/store"
)

// migrated is what fillEveryTable made, for the checks after the copy.
type migrated struct {
	key     string // the owner's API key
	owner   string // user id
	channel string // the plain channel
	search  string // a word only one message has
	vapid   string // the public VAPID key
	picture string // an attachment's id, whose bytes are pictureBytes
}

// pictureBytes are the stored picture's, NULs included.
var pictureBytes = []byte{0xff, 0xd8, 0, 1, 0}

// fillEveryTable writes through the CLI and the store's API until every
// table of the SQLite database at env's data_dir has a row.
func fillEveryTable(t *testing.T, env cliEnv) migrated {
	t.Helper()
	ctx := context.Background()
	mustCLI(t, env, "correct horse battery\n", "user", "add", "owner@example.com", "--name", "Owner", "--password-stdin")
	mustCLI(t, env, "", "user", "add", "approver@example.com", "--plan", "free") // no password: a NULL column
	key := strings.TrimSpace(mustCLI(t, env, "", "key", "create", "owner@example.com", "--name", "scripts"))
	st := openCLIStore(t, env)
	owner, err := st.UserByEmail(ctx, "owner@example.com")
	if err != nil {
		t.Fatal(err)
	}
	approver, err := st.UserByEmail(ctx, "approver@example.com")
	if err != nil {
		t.Fatal(err)
	}
	// Quiet hours: a JSON column of users.
	if err := st.SetQuietHours(ctx, owner.ID, store.QuietHours{Enabled: true, Start: "22:00", End: "07:00",
		TimeZone: "Europe/Berlin", Mode: store.QuietHold}); err != nil {
		t.Fatal(err)
	}
	// A revoked key, counted in credential_changes.
	if err := st.CreateAPIKey(ctx, &store.APIKey{UserID: owner.ID, Name: "old", Prefix: "pk_live_old0"}, store.HashToken("old key"), 10); err != nil {
		t.Fatal(err)
	}
	keys, err := st.ListAPIKeys(ctx, owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if k.Name == "old" {
			if err := st.RevokeAPIKey(ctx, owner.ID, k.ID); err != nil {
				t.Fatal(err)
			}
		}
	}

	// A session whose refresh token was exchanged once: a spent token.
	now := time.Now()
	tokens := func(n string) store.SessionTokens {
		return store.SessionTokens{AccessHash: store.HashToken("access " + n), RefreshHash: store.HashToken("refresh " + n),
			AccessExpiresAt: now.Add(time.Hour), RefreshExpiresAt: now.Add(24 * time.Hour)}
	}
	sess, err := st.CreateSession(ctx, owner.ID, tokens("1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.RotateSession(ctx, store.HashToken("refresh 1"), tokens("2")); err != nil {
		t.Fatal(err)
	}

	// Channels: one in a folder, pinned, with a source secret and a
	// template; one asking for approval.
	folder := &store.Folder{UserID: owner.ID, Name: "Servers"}
	if err := st.CreateFolder(ctx, folder); err != nil {
		t.Fatal(err)
	}
	plain := &store.Channel{UserID: owner.ID, Name: "Backups", Icon: "disk", Color: "#1E90FF"}
	if err := st.CreateChannel(ctx, plain); err != nil {
		t.Fatal(err)
	}
	secret := "shared secret"
	if _, err := st.UpdateChannel(ctx, owner.ID, plain.ID, store.ChannelPatch{
		FolderID:     store.Optional[string]{Set: true, Value: &folder.ID},
		SourceSecret: &secret,
		Template:     store.Optional[store.Template]{Set: true, Value: &store.Template{Title: "Backup {{.job}}", Body: "{{.bytes}} bytes"}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.PinChannel(ctx, owner.ID, plain.ID); err != nil {
		t.Fatal(err)
	}
	rule := store.ApprovalRule{RequiredCount: 1, Approvers: []string{approver.ID}, WindowSeconds: 3600}
	gated := &store.Channel{UserID: owner.ID, Name: "Deploys"}
	if err := st.CreateChannel(ctx, gated); err != nil {
		t.Fatal(err)
	}
	if _, err := st.UpdateChannel(ctx, owner.ID, gated.ID, store.ChannelPatch{Approval: store.Optional[store.ApprovalRule]{Set: true, Value: &rule}}); err != nil {
		t.Fatal(err)
	}
	// The approver accepts: an invitation with its account, and the
	// channel's messages on their list.
	invs, err := st.Invitations(ctx, approver.ID, approver.Email)
	if err != nil || len(invs) != 1 {
		t.Fatalf("the approver's invitations: %v, %v", invs, err)
	}
	if _, err := st.AnswerInvitation(ctx, approver.ID, approver.Email, invs[0].ID, true); err != nil {
		t.Fatal(err)
	}
	// An urgent policy whose escalation list names the approver, who
	// accepts that too.
	urgent := store.UrgentPolicy{RepeatSeconds: 60, ExpireSeconds: 600, EscalateAfterSeconds: 60, Escalation: []string{approver.ID}}
	if _, err := st.UpdateChannel(ctx, owner.ID, gated.ID, store.ChannelPatch{Urgent: store.Optional[store.UrgentPolicy]{Set: true, Value: &urgent}}); err != nil {
		t.Fatal(err)
	}
	if invs, err = st.Invitations(ctx, approver.ID, approver.Email); err != nil || len(invs) != 2 {
		t.Fatalf("the approver's invitations: %v, %v", invs, err)
	}
	for _, in := range invs {
		if in.Role == store.RoleEscalation {
			if _, err := st.AnswerInvitation(ctx, approver.ID, approver.Email, in.ID, true); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A web device of the session: every unmuted message queues a push job.
	if err := st.RegisterDevice(ctx, &store.Device{UserID: owner.ID, Platform: "web", Name: "laptop",
		PushToken: `{"endpoint":"https://push.example.com/1"}`, SessionID: sess.ID}); err != nil {
		t.Fatal(err)
	}

	// Messages in every state.
	send := func(c *store.Channel, title, body string, muted bool, callback *string, approval *store.ApprovalRule) *store.Message {
		m := &store.Message{ChannelID: c.ID, OwnerID: owner.ID, Title: title, Body: body, Priority: "high",
			Actions: json.RawMessage(`[{"id":"ok","label":"OK"}]`), Muted: muted, CallbackURL: callback, Approval: approval}
		if err := st.CreateMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	send(plain, "Backup done", "nightly zebracorn run", false, nil, nil) // pending
	send(plain, "Quiet", "", true, nil, nil)                             // muted
	hook := "https://ci.example.com/hook"
	answered := send(plain, "Deploy?", "", false, &hook, nil)
	if err := st.Respond(ctx, answered.ID, json.RawMessage(`{"action":"ok"}`), time.Now(),
		&store.NewDelivery{ChannelID: plain.ID, Event: "message.responded", URL: hook, Body: []byte(`{"signed":"bytes"}`)}); err != nil {
		t.Fatal(err)
	}
	read := send(plain, "Read", "", false, nil, nil)
	if err := st.Respond(ctx, read.ID, json.RawMessage(`{"action":"ok"}`), time.Now(), nil); err != nil {
		t.Fatal(err)
	}
	if p, err := st.ReadResponse(ctx, plain.ID, read.ID, time.Now().Add(-time.Hour)); err != nil || p.State != store.StateSubmitted {
		t.Fatalf("read response = %+v, %v", p, err)
	}
	send(gated, "Open question", "", false, nil, &rule)
	// An urgent message: its alert, and who it reached.
	if err := st.CreateMessage(ctx, &store.Message{ChannelID: gated.ID, Title: "Disk failing", Priority: "urgent",
		Alert: &store.NewAlert{Repeat: time.Minute, Expire: time.Hour, EscalateAfter: time.Minute}}); err != nil {
		t.Fatal(err)
	}
	voted := send(gated, "Ship it?", "", false, &hook, &rule)
	if _, err := st.CastVote(ctx, voted.ID, store.Vote{UserID: approver.ID, UserName: "Approver", Action: "approve",
		ResponseData: json.RawMessage(`{"note":"go"}`)}, func(r store.Resolution) (json.RawMessage, *store.NewDelivery, error) {
		return json.RawMessage(`{"status":"approved"}`), &store.NewDelivery{ChannelID: gated.ID, Event: "approval.resolved", URL: hook, Body: []byte("resolved")}, nil
	}); err != nil {
		t.Fatal(err)
	}
	// A picture kept with its message: bytes with NULs, and a thumbnail.
	pic := &store.Attachment{AttachmentInfo: store.AttachmentInfo{ID: store.NewAttachmentID(), Name: "gate.jpg",
		ContentType: "image/jpeg", Image: true, Thumbnail: true, Width: 2, Height: 1}, UserID: owner.ID, Data: pictureBytes}
	x, err := store.EncodeExtras(&store.Extras{Attachment: &pic.AttachmentInfo})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateMessageWithAttachment(ctx, &store.Message{ChannelID: plain.ID, Title: "Person at the gate", Priority: "high",
		Extras: x}, pic, []byte{0, 0xff}, 0); err != nil {
		t.Fatal(err)
	}
	// A callback attempt that failed: the deliveries' log.
	ds, err := st.ClaimDeliveries(ctx, 10, time.Minute)
	if err != nil || len(ds) == 0 {
		t.Fatalf("claim deliveries = %v, %v", ds, err)
	}
	if _, err := st.RecordAttempt(ctx, &ds[0], store.AttemptResult{At: time.Now(), StatusCode: 502, Error: "bad gateway",
		Duration: 40 * time.Millisecond}, 5, time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}

	// Settings (VAPID keys, cookie key), an OIDC identity, a subscription.
	vapid, _, err := service.New(st, service.Options{}).VAPIDKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.EnsureSetting(ctx, "cookie_key", func() ([]byte, error) { return []byte{0, 1, 2, 0xff}, nil }); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.SignInOIDC(ctx, store.OIDCSignIn{Provider: "homelab", Subject: "approver-1", Email: "approver@example.com",
		EmailVerified: true, LinkByEmail: true, Plan: "free"}); err != nil {
		t.Fatal(err)
	}
	expires := now.Add(30 * 24 * time.Hour)
	if err := st.SaveSubscription(ctx, &store.Subscription{Store: "apple", OriginalID: "1000000001", UserID: owner.ID,
		ProductID: "pro.monthly", Status: "active", ExpiresAt: &expires}, "pro", "free"); err != nil {
		t.Fatal(err)
	}
	// The search index of SQLite, which the copy leaves behind.
	if _, err := st.IndexForSearch(ctx, 1000); err != nil {
		t.Fatal(err)
	}
	return migrated{key: key, owner: owner.ID, channel: plain.ID, search: "zebracorn", vapid: vapid, picture: pic.ID}
}

// heraldTables lists the tables of the SQLite database at path: all but
// SQLite's own and the migrations' record.
func heraldTables(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query(`SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table'
		AND name NOT LIKE 'sqlite%' AND name <> 'schema_migrations' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	return names
}

// pgColumns lists a PostgreSQL table's columns in order.
func pgColumns(t *testing.T, db *sql.DB, table string) []string {
	t.Helper()
	rows, err := db.Query(`SELECT column_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`, table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			t.Fatal(err)
		}
		cols = append(cols, c)
	}
	return cols
}

// tableRows reads every row of table, each as one string of its columns'
// values normalised across the two drivers (integers, text and bytes
// alike), sorted.
func tableRows(t *testing.T, db *sql.DB, table string, cols []string) []string {
	t.Helper()
	rows, err := db.Query("SELECT " + strings.Join(cols, ", ") + " FROM " + table)
	if err != nil {
		t.Fatalf("read %s: %v", table, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for i, v := range vals {
			switch x := v.(type) {
			case nil:
				fmt.Fprintf(&b, "%s=NULL ", cols[i])
			case []byte:
				fmt.Fprintf(&b, "%s=%q ", cols[i], x)
			case string:
				fmt.Fprintf(&b, "%s=%q ", cols[i], x)
			default:
				fmt.Fprintf(&b, "%s=%v ", cols[i], x)
			}
		}
		out = append(out, b.String())
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func TestMigrateDataCopiesEveryTable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pgURL := pgtest.NewDatabase(t)
	env := newCLIEnv(t)
	facts := fillEveryTable(t, env)
	sqlitePath := filepath.Join(env["HERALD_DATA_DIR"], "herald.db")

	out := mustCLI(t, env, "", "migrate-data", "--from", sqlitePath, "--to", pgURL)
	for _, want := range []string{"rows per table", "  messages ", "  events ", "search index starts empty", "[database] url"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	src, err := sql.Open("sqlite", "file:"+sqlitePath+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := sql.Open("pgx", pgURL)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()

	// SQLite's search index is a virtual table, not listed; PostgreSQL's
	// is an ordinary one, which the indexer fills (checked below).
	tables := heraldTables(t, src)
	var pgTables []string
	if err := func() error {
		rows, err := dst.Query(`SELECT table_name FROM information_schema.tables
			WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name NOT IN ('schema_migrations', 'messages_fts') ORDER BY table_name`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				return err
			}
			pgTables = append(pgTables, n)
		}
		return rows.Err()
	}(); err != nil {
		t.Fatal(err)
	}
	// rate_buckets: the replicas' shared rate limits, which SQLite keeps in
	// memory; search_indexed: how far PostgreSQL's search index got, which
	// SQLite's index keeps in a file of its own. search_deletes: SQLite's
	// log of deletes for that index, not copied.
	pgTables = slices.DeleteFunc(pgTables, func(n string) bool { return n == "rate_buckets" || n == "search_indexed" })
	tables = slices.DeleteFunc(tables, func(n string) bool { return n == "search_deletes" })
	if !slices.Equal(tables, pgTables) {
		t.Fatalf("tables: SQLite %v, PostgreSQL %v", tables, pgTables)
	}
	var maxRowid, maxEvent int64
	for _, table := range tables {
		cols := pgColumns(t, dst, table)
		want := tableRows(t, src, table, cols)
		if len(want) == 0 {
			t.Errorf("table %s has no row in the source: fillEveryTable must write one, so that its copy is checked", table)
			continue
		}
		got := tableRows(t, dst, table, cols)
		if !slices.Equal(got, want) {
			t.Errorf("table %s differs:\nSQLite:     %q\nPostgreSQL: %q", table, want, got)
		}
	}
	var position int64
	if err := dst.QueryRow("SELECT position FROM search_indexed WHERE id = 1").Scan(&position); err != nil || position != 0 {
		t.Errorf("PostgreSQL's search position after the copy = %d, %v; want 0 (the indexer starts again)", position, err)
	}
	if err := src.QueryRow("SELECT MAX(rowid) FROM messages").Scan(&maxRowid); err != nil {
		t.Fatal(err)
	}
	if err := src.QueryRow("SELECT MAX(id) FROM events").Scan(&maxEvent); err != nil {
		t.Fatal(err)
	}

	// The copy works as a Herald database.
	st, err := store.Open(ctx, pgURL, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, u, err := st.APIKeyByHash(ctx, store.HashToken(facts.key)); err != nil || u.ID != facts.owner {
		t.Fatalf("sign in by key = %v, %v; want user %s", u, err, facts.owner)
	}
	page, err := st.ListMessages(ctx, store.MessageQuery{UserID: facts.owner, ChannelID: facts.channel, Limit: 10})
	if err != nil || len(page.Messages) != 5 {
		t.Fatalf("channel's messages = %+v, %v; want 5", page, err)
	}
	if data, err := st.AttachmentData(ctx, facts.picture, false); err != nil || !bytes.Equal(data, pictureBytes) {
		t.Errorf("the picture after the copy = %v, %v; want %v", data, err, pictureBytes)
	}
	if vapid, _, err := service.New(st, service.Options{}).VAPIDKeys(ctx); err != nil || vapid != facts.vapid {
		t.Errorf("VAPID key after the copy = %q, %v; want %q", vapid, err, facts.vapid)
	}
	search := store.MessageQuery{UserID: facts.owner, Search: facts.search, Limit: 10}
	if page, err := st.ListMessages(ctx, search); err != nil || len(page.Messages) != 0 {
		t.Fatalf("search before indexing = %+v, %v; want nothing yet", page, err)
	}
	if n, err := st.IndexForSearch(ctx, 1000); err != nil || n == 0 {
		t.Fatalf("index for search = %d, %v", n, err)
	}
	if page, err := st.ListMessages(ctx, search); err != nil || len(page.Messages) != 1 || page.Messages[0].Title != "Backup done" {
		t.Fatalf("search after indexing = %+v, %v; want the backup message", page, err)
	}
	m := &store.Message{ChannelID: facts.channel, OwnerID: facts.owner, Title: "After the move", Priority: "normal"}
	if err := st.CreateMessage(ctx, m); err != nil {
		t.Fatal(err)
	}
	var rowid int64
	if err := dst.QueryRow("SELECT rowid FROM messages WHERE id = $1", m.ID).Scan(&rowid); err != nil {
		t.Fatal(err)
	}
	if rowid <= maxRowid {
		t.Errorf("new message's rowid = %d, want above the copied %d", rowid, maxRowid)
	}
	evs, err := st.EventsAfter(ctx, facts.owner, 0, 100)
	if err != nil || len(evs) == 0 {
		t.Fatalf("events = %v, %v", evs, err)
	}
	if last := evs[len(evs)-1]; last.MessageID != m.ID || last.ID <= maxEvent {
		t.Errorf("newest event = %+v, want the new message's with an id above the copied %d", last, maxEvent)
	}
}

// pgSnapshot reads every row of every table of the PostgreSQL database.
func pgSnapshot(t *testing.T, db *sql.DB) map[string][]string {
	t.Helper()
	rows, err := db.Query(`SELECT table_name FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, n)
	}
	rows.Close()
	snap := map[string][]string{}
	for _, table := range tables {
		snap[table] = tableRows(t, db, table, pgColumns(t, db, table))
	}
	return snap
}

func TestMigrateDataRefusesNonEmptyTarget(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pgURL := pgtest.NewDatabase(t)
	env := newCLIEnv(t)
	mustCLI(t, env, "", "user", "add", "me@example.com")
	sqlitePath := filepath.Join(env["HERALD_DATA_DIR"], "herald.db")

	// Someone already uses the PostgreSQL database.
	st, err := store.Open(ctx, pgURL, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateUser(ctx, &store.User{Email: "other@example.com", Plan: "free"}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	db, err := sql.Open("pgx", pgURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	before := pgSnapshot(t, db)

	out, _, err := runCLI(t, env, "", "migrate-data", "--from", sqlitePath, "--to", pgURL)
	if err == nil || !strings.Contains(err.Error(), "already holds Herald data (rows in users)") || !strings.Contains(err.Error(), "nothing was copied") {
		t.Fatalf("migrate-data into a used database = %v (output %q), want a refusal naming users", err, out)
	}
	after := pgSnapshot(t, db)
	for table, rows := range before {
		if !slices.Equal(after[table], rows) {
			t.Errorf("table %s changed:\nbefore: %q\nafter:  %q", table, rows, after[table])
		}
	}
	var off int
	if err := db.QueryRow("SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal AND tgenabled <> 'O'").Scan(&off); err != nil || off != 0 {
		t.Errorf("%d triggers left off (%v)", off, err)
	}
}
