package hub

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// wait bounds how long a test waits for the hub: only to turn a hang into a
// failure.
const wait = 30 * time.Second

// eventLog is an event log in memory: the feed and loader a hub runs on,
// as the store provides them over SQLite.
type eventLog struct {
	mu     sync.Mutex
	frames []*Frame // ids 1..n
	commit func(int64)
	ready  chan struct{}
	loads  int
}

func newEventLog() *eventLog { return &eventLog{ready: make(chan struct{})} }

func (l *eventLog) follow(ctx context.Context, commit func(int64)) error {
	l.mu.Lock()
	l.commit = commit
	n := int64(len(l.frames))
	l.mu.Unlock()
	commit(n)
	close(l.ready)
	<-ctx.Done()
	return nil
}

func (l *eventLog) load(_ context.Context, after, upTo int64) ([]*Frame, int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.loads++
	return l.frames[after:upTo], upTo, nil
}

// append commits one event per user given, in order.
func (l *eventLog) append(users ...string) {
	l.mu.Lock()
	for _, u := range users {
		id := int64(len(l.frames) + 1)
		l.frames = append(l.frames, &Frame{ID: id, User: u, Data: []byte(u)})
	}
	n := int64(len(l.frames))
	commit := l.commit
	l.mu.Unlock()
	commit(n)
}

func startHub(t *testing.T, l *eventLog, buffer int) *Hub {
	t.Helper()
	h := New(FeedFunc(l.follow), l.load, Options{Buffer: buffer})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = h.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	<-l.ready
	return h
}

func subscribe(t *testing.T, h *Hub, user string) (*Sub, int64) {
	t.Helper()
	s, pos, err := h.Subscribe(context.Background(), user)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, pos
}

func receive(t *testing.T, s *Sub) *Frame {
	t.Helper()
	select {
	case f := <-s.Frames():
		return f
	case <-time.After(wait):
		t.Fatal("no frame")
	}
	return nil
}

// TestHubDeliversToItsUserOnly: each subscriber gets its user's frames, in
// order, from after the position Subscribe returned.
func TestHubDeliversToItsUserOnly(t *testing.T) {
	l := newEventLog()
	l.frames = append(l.frames, &Frame{ID: 1, User: "ann"}) // before the hub started
	h := startHub(t, l, 8)
	ann, pos := subscribe(t, h, "ann")
	if pos != 1 {
		t.Fatalf("position %d, want 1 (the log's end when the hub started)", pos)
	}
	bob, _ := subscribe(t, h, "bob")
	l.append("ann", "bob", "ann", "cat")
	for _, want := range []int64{2, 4} {
		if f := receive(t, ann); f.ID != want || f.User != "ann" {
			t.Fatalf("ann got %d of %s, want %d", f.ID, f.User, want)
		}
	}
	if f := receive(t, bob); f.ID != 3 {
		t.Fatalf("bob got %d, want 3", f.ID)
	}
	l.append("bob")
	if f := receive(t, bob); f.ID != 6 {
		t.Fatalf("bob got %d, want 6: nothing of ann's or cat's", f.ID)
	}
	if got := h.Subscribers(); got != 2 {
		t.Fatalf("%d subscribers, want 2", got)
	}
	ann.Close()
	ann.Close()
	if got := h.Subscribers(); got != 1 {
		t.Fatalf("%d subscribers after a close, want 1", got)
	}
}

// TestHubSlowSubscriber: a subscriber that does not read keeps what fits in
// its buffer and is told how far it must catch up; the others get every
// frame.
func TestHubSlowSubscriber(t *testing.T) {
	l := newEventLog()
	h := startHub(t, l, 2)
	slow, _ := subscribe(t, h, "ann")
	fast, _ := subscribe(t, h, "ann")
	if got := slow.Lost(); got != 0 {
		t.Fatalf("Lost() = %d before anything happened", got)
	}
	const n = 50
	for i := range n {
		l.append("ann")
		if f := receive(t, fast); f.ID != int64(i+1) {
			t.Fatalf("fast got %d, want %d", f.ID, i+1)
		}
	}
	if got, want := h.Dropped(), int64(n-2); got != want {
		t.Fatalf("dropped %d, want %d", got, want)
	}
	for _, want := range []int64{1, 2} {
		if f := receive(t, slow); f.ID != want {
			t.Fatalf("slow got %d, want %d", f.ID, want)
		}
	}
	if got := slow.Lost(); got != n {
		t.Fatalf("Lost() = %d, want %d: every dropped frame is at or below it", got, n)
	}
	if got := slow.Lost(); got != 0 {
		t.Fatalf("Lost() again = %d, want 0", got)
	}
	l.append("ann")
	if f := receive(t, slow); f.ID != n+1 {
		t.Fatalf("slow got %d after catching up, want %d", f.ID, n+1)
	}
}

// TestHubStop: when Run ends, subscribers are told, and no one subscribes.
func TestHubStop(t *testing.T) {
	l := newEventLog()
	h := New(FeedFunc(l.follow), l.load, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	s, _ := subscribe(t, h, "ann")
	told := make(chan struct{})
	s.AfterStop(func() { close(told) })
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	select {
	case <-s.Done():
	case <-time.After(wait):
		t.Fatal("Done still open after Run returned")
	}
	select {
	case <-told:
	case <-time.After(wait):
		t.Fatal("AfterStop's function not called after Run returned")
	}
	// Hung on a stopped hub, it is called at once.
	again := make(chan struct{})
	s.AfterStop(func() { close(again) })
	select {
	case <-again:
	case <-time.After(wait):
		t.Fatal("AfterStop on a stopped hub: function not called")
	}
	if _, _, err := h.Subscribe(context.Background(), "ann"); !errors.Is(err, ErrStopped) {
		t.Fatalf("Subscribe after stop: %v, want ErrStopped", err)
	}
}

// TestHubRetriesFailedLoads: a loader error is retried; no frame is lost.
func TestHubRetriesFailedLoads(t *testing.T) {
	l := newEventLog()
	fail := true
	var mu sync.Mutex
	load := func(ctx context.Context, after, upTo int64) ([]*Frame, int64, error) {
		mu.Lock()
		defer mu.Unlock()
		if fail {
			fail = false
			return nil, 0, errors.New("database is locked")
		}
		return l.load(ctx, after, upTo)
	}
	h := New(FeedFunc(l.follow), load, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = h.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	<-l.ready
	s, _ := subscribe(t, h, "ann")
	l.append("ann")
	if f := receive(t, s); f.ID != 1 {
		t.Fatalf("got %d, want 1", f.ID)
	}
}

// TestHubLoadsNothingUnwatched: with no stream open the hub loads nothing
// (a send costs what it did before the hub), and a stream that opens later
// starts from the log's end: what came before is its to read from the
// database, and everything after arrives.
func TestHubLoadsNothingUnwatched(t *testing.T) {
	l := newEventLog()
	h := startHub(t, l, 8)
	first, _ := subscribe(t, h, "ann") // the hub has started
	first.Close()
	l.append("ann", "bob", "ann")
	deadline := time.Now().Add(wait)
	for h.Position() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("position %d, want 3", h.Position())
		}
		time.Sleep(time.Millisecond)
	}
	l.mu.Lock()
	loads := l.loads
	l.mu.Unlock()
	if loads != 0 {
		t.Fatalf("%d loads with no stream open, want 0", loads)
	}
	ann, pos := subscribe(t, h, "ann")
	if pos != 3 {
		t.Fatalf("a stream opened after 3 events starts at %d, want 3", pos)
	}
	l.append("bob", "ann")
	if f := receive(t, ann); f.ID != 5 || f.User != "ann" {
		t.Fatalf("ann got %d of %s, want 5", f.ID, f.User)
	}
}
