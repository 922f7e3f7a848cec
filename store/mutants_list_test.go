package store

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// TestListUserMessagesOffset: an offset into the list of all a user's
// channels counts across the channels, wherever their messages interleave.
func TestListUserMessagesOffset(t *testing.T) {
	ctx := context.Background()
	f := newMutFixture(t)
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

// TestAnswerWakesPusherForBrowsers: answering a message queues the push
// that replaces its notification, and wakes the pusher, only when a
// recipient has a browser to replace it on.
func TestAnswerWakesPusherForBrowsers(t *testing.T) {
	ctx := context.Background()
	f := newMutFixture(t)
	wake := f.s.Wakeup(TopicPush)
	for _, browser := range []bool{false, true} {
		if browser {
			d := &Device{UserID: f.owner.ID, Platform: "web", Name: "Firefox", PushToken: "https://push.example.com/sub/1"}
			if err := f.s.RegisterDevice(ctx, d); err != nil {
				t.Fatal(err)
			}
		}
		m := &Message{ChannelID: f.channel.ID, Title: "Deploy?", Priority: "normal"}
		if err := f.s.CreateMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
		select { // the send's own wake-up
		case <-wake:
		default:
			t.Fatal("a send did not wake the pusher")
		}
		if err := f.s.Respond(ctx, m.ID, json.RawMessage(`{"action":"approve"}`), time.Now(), nil); err != nil {
			t.Fatal(err)
		}
		var jobs int
		if err := f.s.read.QueryRowContext(ctx, "SELECT count(*) FROM push_jobs WHERE message_id = ? AND kind = ?", m.ID, PushUpdate).Scan(&jobs); err != nil {
			t.Fatal(err)
		}
		woken := false
		select { // signalled before the write returned, if at all
		case <-wake:
			woken = true
		default:
		}
		want := 0
		if browser {
			want = 1
		}
		if jobs != want || woken != browser {
			t.Errorf("browser %v: %d update push jobs, pusher woken %v; want %d, %v", browser, jobs, woken, want, browser)
		}
	}
}

// TestListUserMessagesTotalAtCap: a user's list whose first channels count
// exactly TotalCap messages still counts the next channel's, so that the
// total is reported as capped, not exact.
func TestListUserMessagesTotalAtCap(t *testing.T) {
	t.Parallel() // 20,000 rows: alongside the other tests
	ctx := context.Background()
	f := newMutFixture(t)
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
	f := newMutFixture(t)
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
