package service

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/pgtest"
	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/store"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testkit.AnnounceSkips("herald/service")
	os.Exit(code)
}

// TestPollAnswer: what each state the store reads says to the polling
// sender.
func TestPollAnswer(t *testing.T) {
	t.Parallel()
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	buttons := json.RawMessage(`[{"type":"button","key":"yes","label":"Yes"}]`)
	links := json.RawMessage(`[{"type":"link","label":"Docs","url":"https://example.com"}]`)
	plain := json.RawMessage(`{"event":"action.triggered","triggered_by":"yes"}`)
	approval := json.RawMessage(`{"result":{"event":"approval.resolved"},"approval_status":"approved","approval":{"required_count":1}}`)
	for _, c := range []struct {
		name       string
		poll       store.Poll
		want       PollAnswer
		wantStatus string // the approval outcome, if any
	}{
		{"pending with buttons", store.Poll{State: store.StatePending, Actions: buttons}, PollAnswer{State: store.StatePending}, ""},
		{"pending with links only", store.Poll{State: store.StatePending, Actions: links},
			PollAnswer{State: store.StatePending, Unanswerable: true}, ""},
		{"pending without actions", store.Poll{State: store.StatePending, Actions: json.RawMessage(`[]`)},
			PollAnswer{State: store.StatePending, Unanswerable: true}, ""},
		{"pending approval without actions", store.Poll{State: store.StatePending, Actions: json.RawMessage(`[]`), Approval: true},
			PollAnswer{State: store.StatePending}, ""},
		{"submitted", store.Poll{State: store.StateSubmitted, Response: plain, SubmittedAt: at},
			PollAnswer{State: store.StateSubmitted, SubmittedAt: at, Result: plain}, ""},
		{"submitted approval", store.Poll{State: store.StateSubmitted, Response: approval, SubmittedAt: at},
			PollAnswer{State: store.StateSubmitted, SubmittedAt: at, Result: json.RawMessage(`{"event":"approval.resolved"}`)}, "approved"},
		{"already read", store.Poll{State: store.StateAlreadyRead}, PollAnswer{State: store.StateAlreadyRead}, ""},
		{"expired", store.Poll{State: store.StateExpired}, PollAnswer{State: store.StateExpired}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := pollAnswer(c.poll)
			if err != nil {
				t.Fatal(err)
			}
			if got.State != c.want.State || got.Unanswerable != c.want.Unanswerable || !got.SubmittedAt.Equal(c.want.SubmittedAt) ||
				string(got.Result) != string(c.want.Result) {
				t.Errorf("got %+v; want %+v", got, c.want)
			}
			status := ""
			if got.Approval != nil {
				status = got.Approval.Status
			}
			if status != c.wantStatus {
				t.Errorf("approval outcome %q; want %q", status, c.wantStatus)
			}
		})
	}
	if _, err := pollAnswer(store.Poll{State: store.StateSubmitted, Response: json.RawMessage(`[1]`)}); err == nil {
		t.Error("a stored answer that is not an object decoded")
	}
}

// newTestService returns the rules over a new store on the database dsn
// names, on clock clk, with one pro user.
func newTestService(t *testing.T, dsn string, clk *testkit.Clock) (*Service, *store.User) {
	t.Helper()
	st, err := store.Open(context.Background(), dsn, store.Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	})
	u := &store.User{Email: "ann@example.com", Name: "Ann", Plan: "pro"}
	if err := st.CreateUser(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	return New(st, Options{Now: clk.Now, ResponseTTL: time.Hour}), u
}

// TestPoll: a sender polls its message through the rules and a real store:
// pending, then the answer once, then already_read; an answer not polled
// within the response TTL is expired; a message of another channel is not
// found.
func TestPoll(t *testing.T) {
	t.Parallel()
	pgtest.ForEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		clk := testkit.NewClock()
		svc, u := newTestService(t, dsn, clk)
		ch := &store.Channel{Name: "Deploys"}
		other := &store.Channel{Name: "Other"}
		for _, c := range []*store.Channel{ch, other} {
			if err := svc.CreateChannel(ctx, u, c); err != nil {
				t.Fatal(err)
			}
		}
		send := func(actions ...Action) *store.Message {
			t.Helper()
			title := "Deploy?"
			m, err := svc.Send(ctx, ch, &SendPayload{Title: &title, Actions: actions})
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
		poll := func(c *store.Channel, id string) PollAnswer {
			t.Helper()
			a, err := svc.Poll(ctx, c, id)
			if err != nil {
				t.Fatal(err)
			}
			return a
		}
		yes := Action{Type: "button", Key: "yes", Label: "Yes"}

		m := send(yes)
		if a := poll(ch, m.ID); a.State != store.StatePending || a.Unanswerable {
			t.Fatalf("before an answer: %+v; want pending, answerable", a)
		}
		if _, err := svc.Respond(ctx, u, m.ID, "yes", nil); err != nil {
			t.Fatal(err)
		}
		a := poll(ch, m.ID)
		var result struct {
			TriggeredBy string `json:"triggered_by"`
		}
		if a.State != store.StateSubmitted || json.Unmarshal(a.Result, &result) != nil || result.TriggeredBy != "yes" || a.SubmittedAt.IsZero() {
			t.Fatalf("first poll after the answer: %+v (%s); want submitted, triggered_by yes", a, a.Result)
		}
		if a := poll(ch, m.ID); a.State != store.StateAlreadyRead || a.Result != nil {
			t.Fatalf("second poll: %+v; want already_read, no result", a)
		}

		late := send(yes)
		if _, err := svc.Respond(ctx, u, late.ID, "yes", nil); err != nil {
			t.Fatal(err)
		}
		clk.Advance(time.Hour)
		if a := poll(ch, late.ID); a.State != store.StateExpired {
			t.Fatalf("an answer polled after the response TTL: %+v; want expired", a)
		}

		links := send(Action{Type: "link", Label: "Docs", Value: "https://example.com/docs"})
		if a := poll(ch, links.ID); a.State != store.StatePending || !a.Unanswerable {
			t.Fatalf("a message with links only: %+v; want pending, unanswerable", a)
		}

		_, err := svc.Poll(ctx, other, m.ID)
		wantKind(t, err, NotFound, `no message "`+m.ID+`" in this channel`)
	})
}
