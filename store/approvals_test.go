package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/testkit"
)

// aprFixture is a store with a channel and n users who approve on it.
type aprFixture struct {
	s         *Store
	clock     *testkit.Clock
	channelID string
	users     []*User
}

func aprSetup(t *testing.T, dsn string, approvers int) *aprFixture {
	t.Helper()
	clk := testkit.NewClock()
	s, err := Open(context.Background(), dsn, Options{Now: clk.Now})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	f := &aprFixture{s: s, clock: clk}
	ctx := context.Background()
	for i := range approvers {
		u := &User{Email: fmt.Sprintf("user%d@example.com", i), Name: fmt.Sprintf("user%d", i), Plan: "free"}
		if err := s.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		f.users = append(f.users, u)
	}
	ch := &Channel{UserID: f.users[0].ID, Name: "deploys"}
	if err := s.CreateChannel(ctx, ch); err != nil {
		t.Fatal(err)
	}
	f.channelID = ch.ID
	return f
}

// message stores an approval message: required of every user, window seconds.
func (f *aprFixture) message(t *testing.T, required, window int) *Message {
	t.Helper()
	rule := &ApprovalRule{RequiredCount: required, WindowSeconds: window}
	for _, u := range f.users {
		rule.Approvers = append(rule.Approvers, u.ID)
	}
	hook := "https://hooks.example.com/herald"
	m := &Message{ChannelID: f.channelID, Title: "Deploy?", Priority: "normal", Approval: rule, CallbackURL: &hook}
	if err := f.s.CreateMessage(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	return m
}

// insertVote records a vote directly, bypassing CastVote's rules.
func (f *aprFixture) insertVote(t *testing.T, id string, u *User, action string, at time.Time) {
	t.Helper()
	err := f.s.update(context.Background(), func(tx *writeTx) error {
		_, err := tx.Exec(`INSERT INTO votes (message_id, user_id, user_name, action, response_data, responded_at)
			VALUES (?, ?, ?, ?, '{}', ?)`, id, u.ID, u.Name, action, ms(at))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// count returns the rows of table for message id.
func (f *aprFixture) count(t *testing.T, table, id string) int {
	t.Helper()
	var n int
	if err := f.s.read.QueryRowContext(context.Background(), "SELECT count(*) FROM "+table+" WHERE message_id = ?", id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// aprResolver records what it is asked to resolve and answers like the
// server: a polling response unless expired, and a callback.
type aprResolver struct {
	mu    sync.Mutex
	calls []Resolution
}

func (r *aprResolver) resolve(res Resolution) (json.RawMessage, *NewDelivery, error) {
	r.mu.Lock()
	r.calls = append(r.calls, res)
	r.mu.Unlock()
	var response json.RawMessage
	if res.Status != ApprovalExpired {
		response = json.RawMessage(`{"approval_status":"` + res.Status + `"}`)
	}
	var job *NewDelivery
	if res.CallbackURL != nil {
		job = &NewDelivery{ChannelID: res.ChannelID, Event: "approval.resolved", URL: *res.CallbackURL, Body: []byte(`{}`)}
	}
	return response, job, nil
}

func (r *aprResolver) calledWith() []Resolution {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Resolution(nil), r.calls...)
}

func TestExpireApprovalsReportsEarlierRejection(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		cases := []struct {
			name       string
			votes      func(f *aprFixture, m *Message) // recorded before the deadline passes
			status     string
			approvals  int
			rejections int
			state      string
		}{
			{"rejection before the deadline", func(f *aprFixture, m *Message) {
				f.insertVote(t, m.ID, f.users[1], "approve", m.CreatedAt.Add(5*time.Second))
				f.insertVote(t, m.ID, f.users[2], "reject", m.ApprovalDeadline.Add(-time.Millisecond))
			}, ApprovalRejected, 1, 1, StateSubmitted},
			{"rejection at the deadline is not counted", func(f *aprFixture, m *Message) {
				f.insertVote(t, m.ID, f.users[1], "approve", m.CreatedAt.Add(5*time.Second))
				f.insertVote(t, m.ID, f.users[2], "reject", *m.ApprovalDeadline)
			}, ApprovalExpired, 1, 0, StateExpired},
			{"approvals only", func(f *aprFixture, m *Message) {
				f.insertVote(t, m.ID, f.users[1], "approve", m.CreatedAt.Add(5*time.Second))
			}, ApprovalExpired, 1, 0, StateExpired},
			{"no votes", func(*aprFixture, *Message) {}, ApprovalExpired, 0, 0, StateExpired},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				ctx := context.Background()
				f := aprSetup(t, freshDSN(t, dsn), 3)
				m := f.message(t, 3, 60)
				tc.votes(f, m)
				r := &aprResolver{}

				// Nothing closes before the deadline.
				res, err := f.s.ExpireApprovals(ctx, m.ApprovalDeadline.Add(-time.Millisecond), r.resolve)
				if err != nil || len(res) != 0 {
					t.Fatalf("ExpireApprovals before the deadline = %v, %v; want nothing", res, err)
				}

				f.clock.Advance(61 * time.Second)
				res, err = f.s.ExpireApprovals(ctx, f.clock.Now(), r.resolve)
				if err != nil {
					t.Fatal(err)
				}
				if len(res) != 1 {
					t.Fatalf("ExpireApprovals resolved %d approvals, want 1", len(res))
				}
				got := res[0]
				if got.MessageID != m.ID || got.Status != tc.status || got.Approvals != tc.approvals ||
					got.Rejections != tc.rejections || got.Required != 3 || len(got.Votes) != tc.approvals+tc.rejections {
					t.Fatalf("resolution = %+v, want %s with %d/%d", got, tc.status, tc.approvals, tc.rejections)
				}
				if !got.At.Equal(*m.ApprovalDeadline) || got.TriggeredBy != "" {
					t.Fatalf("resolution at %v triggered by %q, want at the deadline %v, by nobody", got.At, got.TriggeredBy, *m.ApprovalDeadline)
				}
				if calls := r.calledWith(); len(calls) != 1 || calls[0].Status != tc.status {
					t.Fatalf("resolver calls = %+v, want one with status %s", calls, tc.status)
				}

				stored, err := f.s.Message(ctx, m.ID)
				if err != nil {
					t.Fatal(err)
				}
				if stored.ApprovalStatus != tc.status || stored.State != tc.state {
					t.Fatalf("stored approval/state = %s/%s, want %s/%s", stored.ApprovalStatus, stored.State, tc.status, tc.state)
				}
				if stored.Delivery == nil || f.count(t, "deliveries", m.ID) != 1 {
					t.Fatalf("delivery = %+v, want one queued callback", stored.Delivery)
				}

				// Exactly once: a second pass finds nothing.
				if res, err := f.s.ExpireApprovals(ctx, f.clock.Now(), r.resolve); err != nil || len(res) != 0 {
					t.Fatalf("second ExpireApprovals = %v, %v; want nothing", res, err)
				}
				if _, ok, err := f.s.NextApprovalDeadline(ctx); err != nil || ok {
					t.Fatalf("NextApprovalDeadline = %v, %v; want none open", ok, err)
				}
				if n := len(r.calledWith()); n != 1 {
					t.Fatalf("resolver called %d times, want 1", n)
				}
			})
		}
	})
}

func TestCastVoteAtOrAfterDeadline(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		for _, late := range []time.Duration{0, time.Millisecond, time.Hour} {
			t.Run(fmt.Sprint("deadline+", late), func(t *testing.T) {
				ctx := context.Background()
				f := aprSetup(t, freshDSN(t, dsn), 3)
				m := f.message(t, 2, 60)
				r := &aprResolver{}
				early := Vote{UserID: f.users[0].ID, UserName: "user0", Action: "approve", RespondedAt: m.CreatedAt.Add(time.Second)}
				if res, err := f.s.CastVote(ctx, m.ID, early, r.resolve); res != nil || err != nil {
					t.Fatalf("vote in the window = %+v, %v; want pending", res, err)
				}

				// A rejection at or after the deadline does not count: the
				// approval expires with the votes before it.
				lateVote := Vote{UserID: f.users[1].ID, UserName: "user1", Action: "reject", RespondedAt: m.ApprovalDeadline.Add(late)}
				res, err := f.s.CastVote(ctx, m.ID, lateVote, r.resolve)
				if !errors.Is(err, ErrApprovalClosed) {
					t.Fatalf("late vote error = %v, want ErrApprovalClosed", err)
				}
				if res == nil || res.Status != ApprovalExpired || res.Approvals != 1 || res.Rejections != 0 || len(res.Votes) != 1 ||
					res.Votes[0].UserID != f.users[0].ID || !res.At.Equal(*m.ApprovalDeadline) {
					t.Fatalf("late vote resolution = %+v, want expired at the deadline with user0's approval", res)
				}
				if calls := r.calledWith(); len(calls) != 1 || calls[0].Status != ApprovalExpired {
					t.Fatalf("resolver calls = %+v, want one expired", calls)
				}
				if n := f.count(t, "votes", m.ID); n != 1 {
					t.Fatalf("%d votes stored, want 1 (the late one not counted)", n)
				}
				stored, err := f.s.Message(ctx, m.ID)
				if err != nil {
					t.Fatal(err)
				}
				if stored.ApprovalStatus != ApprovalExpired || stored.State != StateExpired || stored.Response != nil {
					t.Fatalf("stored = %s/%s/%s, want expired/expired without response", stored.ApprovalStatus, stored.State, stored.Response)
				}

				// Closed for everyone now, whatever the vote's time.
				again := Vote{UserID: f.users[2].ID, UserName: "user2", Action: "approve", RespondedAt: m.CreatedAt.Add(2 * time.Second)}
				if res, err := f.s.CastVote(ctx, m.ID, again, r.resolve); res != nil || !errors.Is(err, ErrApprovalClosed) {
					t.Fatalf("vote after expiry = %+v, %v; want ErrApprovalClosed", res, err)
				}
				if res, err := f.s.ExpireApprovals(ctx, f.clock.Now().Add(time.Hour), r.resolve); err != nil || len(res) != 0 {
					t.Fatalf("ExpireApprovals after a late vote = %v, %v; want nothing", res, err)
				}
				if n := len(r.calledWith()); n != 1 {
					t.Fatalf("resolver called %d times, want 1", n)
				}
			})
		}
	})
}

func TestCastVoteConcurrent(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		const approvers, required, messages = 12, 4, 6
		f := aprSetup(t, dsn, approvers)
		ctx := context.Background()
		type outcome struct {
			msg int
			res *Resolution
			err error
		}
		cases := []struct {
			name   string
			action func(i int) string // the action of approver i
		}{
			{"all approve", func(int) string { return "approve" }},
			{"some reject", func(i int) string {
				if i%3 == 0 {
					return "reject"
				}
				return "approve"
			}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				msgs := make([]*Message, messages)
				for i := range msgs {
					msgs[i] = f.message(t, required, 3600)
				}
				r := &aprResolver{}
				out := make(chan outcome, messages*approvers)
				start := make(chan struct{})
				var wg sync.WaitGroup
				for mi, m := range msgs {
					for ui, u := range f.users {
						wg.Add(1)
						go func() {
							defer wg.Done()
							<-start
							v := Vote{UserID: u.ID, UserName: u.Name, Action: tc.action(ui), RespondedAt: f.clock.Now()}
							res, err := f.s.CastVote(ctx, m.ID, v, r.resolve)
							out <- outcome{mi, res, err}
						}()
					}
				}
				close(start)
				wg.Wait()
				close(out)

				resolutions := make([][]*Resolution, messages)
				for o := range out {
					switch {
					case o.err == nil && o.res != nil:
						resolutions[o.msg] = append(resolutions[o.msg], o.res)
					case o.err == nil, errors.Is(o.err, ErrApprovalClosed) && o.res == nil:
					default:
						t.Fatalf("vote on %s = %+v, %v", msgs[o.msg].ID, o.res, o.err)
					}
				}
				for mi, m := range msgs {
					if len(resolutions[mi]) != 1 {
						t.Fatalf("message %s: %d resolutions returned, want exactly 1", m.ID, len(resolutions[mi]))
					}
					res := resolutions[mi][0]
					counted := f.count(t, "votes", m.ID)
					if len(res.Votes) != counted || res.Approvals+res.Rejections != counted {
						t.Fatalf("message %s: resolution counts %d votes (%d/%d), %d stored", m.ID, len(res.Votes), res.Approvals, res.Rejections, counted)
					}
					// The deciding vote is the last one: before it, the approval
					// was still open.
					switch {
					case res.Status == ApprovalRejected && res.Rejections == 1 && res.Approvals < required:
					case res.Status == ApprovalApproved && res.Rejections == 0 && res.Approvals == required:
					default:
						t.Fatalf("message %s: resolution %s with %d/%d", m.ID, res.Status, res.Approvals, res.Rejections)
					}
					stored, err := f.s.Message(ctx, m.ID)
					if err != nil {
						t.Fatal(err)
					}
					if stored.ApprovalStatus != res.Status || f.count(t, "deliveries", m.ID) != 1 {
						t.Fatalf("message %s: stored status %q, %d deliveries; want %s and 1", m.ID, stored.ApprovalStatus,
							f.count(t, "deliveries", m.ID), res.Status)
					}
				}
				if n := len(r.calledWith()); n != messages {
					t.Fatalf("resolver called %d times for %d messages", n, messages)
				}
			})
		}

		t.Run("same approver many times", func(t *testing.T) {
			m := f.message(t, 2, 3600)
			r := &aprResolver{}
			errs := make(chan error, 10)
			var wg sync.WaitGroup
			for range 10 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					v := Vote{UserID: f.users[1].ID, UserName: f.users[1].Name, Action: "approve", RespondedAt: f.clock.Now()}
					res, err := f.s.CastVote(ctx, m.ID, v, r.resolve)
					if res != nil {
						err = fmt.Errorf("resolved %+v after one approval of two", res)
					}
					errs <- err
				}()
			}
			wg.Wait()
			close(errs)
			ok, dup := 0, 0
			for err := range errs {
				switch {
				case err == nil:
					ok++
				case errors.Is(err, ErrAlreadyVoted):
					dup++
				default:
					t.Fatal(err)
				}
			}
			if ok != 1 || dup != 9 || f.count(t, "votes", m.ID) != 1 || len(r.calledWith()) != 0 {
				t.Fatalf("%d accepted, %d already voted, %d stored; want 1, 9, 1 and no resolution", ok, dup, f.count(t, "votes", m.ID))
			}
		})
	})
}

// pollResolver answers a resolution with a polling response and no callback.
func pollResolver(res Resolution) (json.RawMessage, *NewDelivery, error) {
	return json.RawMessage(`{"approval_status":"` + res.Status + `"}`), nil, nil
}

// TestCastVoteKeepsResponseData: a vote's response data is stored and
// handed to the resolution as sent; a vote without any is stored as {}.
func TestCastVoteKeepsResponseData(t *testing.T) {
	ctx := context.Background()
	f := newPairFixture(t)
	m := f.approvalMessage(t, 2)
	now := time.Now()

	res, err := f.s.CastVote(ctx, m.ID, Vote{UserID: f.owner.ID, UserName: "mut0", Action: "approve", RespondedAt: now}, pollResolver)
	if err != nil || res != nil {
		t.Fatalf("first vote: resolution %v, error %v; want none, nil", res, err)
	}
	data := json.RawMessage(`{"reason":"looks good"}`)
	res, err = f.s.CastVote(ctx, m.ID, Vote{UserID: f.approver.ID, UserName: "mut1", Action: "approve",
		ResponseData: data, RespondedAt: now.Add(time.Millisecond)}, pollResolver)
	if err != nil {
		t.Fatalf("second vote: %v", err)
	}
	if res == nil {
		t.Fatal("second vote: no resolution, want approved")
	}
	if got, want := string(res.Responses), string(data); got != want {
		t.Errorf("resolution responses = %s, want the deciding vote's %s", got, want)
	}

	votes, err := f.s.Votes(ctx, []string{m.ID})
	if err != nil {
		t.Fatal(err)
	}
	got := votes[m.ID]
	if len(got) != 2 {
		t.Fatalf("stored votes = %+v, want 2", got)
	}
	for i, want := range []string{`{}`, string(data)} {
		if string(got[i].ResponseData) != want {
			t.Errorf("vote %d (%s) response_data = %s, want %s", i, got[i].UserName, got[i].ResponseData, want)
		}
	}
}
