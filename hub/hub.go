// Package hub fans the live stream out: one reader per process follows the
// event log, has each committed event loaded and encoded once, and hands
// the encoded frame to every subscriber of the event's user. It never waits
// for a subscriber: each has a bounded buffer, and one whose buffer is full
// misses frames and is told how far to catch up from the database itself.
//
// The hub knows nothing of SQL or HTTP. Its input is a Feed, "every event
// with an id up to N is committed", which SQLite's writer provides after
// each commit and a PostgreSQL LISTEN/NOTIFY channel can provide across
// replicas; its Loader turns a range of committed ids into frames.
package hub

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Frame is one event encoded for one user: every stream of that user writes
// Data as it is.
type Frame struct {
	ID   int64 // the event id; a user's frames come in increasing id order
	User string
	Data []byte
	// Meta is what the Loader knows of the event beyond Data, for
	// subscribers that write it in another format; the hub passes it on
	// untouched.
	Meta any
}

// Feed reports how far the event log is committed.
type Feed interface {
	// Follow calls commit(n) at once and then after commits, until ctx
	// ends or reading fails: every event with id ≤ n is committed and
	// readable. n never decreases. commit does not block.
	Follow(ctx context.Context, commit func(n int64)) error
}

// FeedFunc adapts a function to Feed.
type FeedFunc func(ctx context.Context, commit func(n int64)) error

// Follow calls f.
func (f FeedFunc) Follow(ctx context.Context, commit func(n int64)) error { return f(ctx, commit) }

// Loader returns the frames of the committed events with after < id ≤ upTo,
// in id order, for every user. It may stop early to keep pages small:
// reached is the id up to which it has read (after < reached ≤ upTo).
type Loader func(ctx context.Context, after, upTo int64) (frames []*Frame, reached int64, err error)

// ErrStopped is returned by Subscribe once the hub has stopped.
var ErrStopped = errors.New("hub: stopped")

// DefaultBuffer is how many frames a subscriber may have waiting.
const DefaultBuffer = 256

// retryDelay is how long the hub waits after its feed or loader failed.
const retryDelay = 250 * time.Millisecond

// Options tune a Hub.
type Options struct {
	// Buffer is each subscriber's frame buffer; default DefaultBuffer.
	Buffer int
	Logger *slog.Logger
}

// Hub is the process's one reader of the event log.
type Hub struct {
	feed   Feed
	load   Loader
	log    *slog.Logger
	buffer int

	horizon atomic.Int64  // the newest n the feed reported
	kick    chan struct{} // the feed reported something

	// mu guards users; dispatching a page holds it for reading, so that
	// Subscribe (which writes) sees pos either before or after a page,
	// never in the middle of one.
	mu    sync.RWMutex
	users map[string][]*Sub
	pos   atomic.Int64 // every event with id ≤ pos has been offered

	dropped atomic.Int64 // frames not handed to a full subscriber

	ready chan struct{} // closed once pos is known
	// stopped ends when Run returns: its Done is every subscriber's, and
	// AfterStop hangs a subscriber's call on it without a goroutine.
	stopped context.Context
	stop    context.CancelFunc
}

// New returns a hub that follows feed and loads frames with load. It does
// nothing until Run.
func New(feed Feed, load Loader, opts Options) *Hub {
	if opts.Buffer <= 0 {
		opts.Buffer = DefaultBuffer
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	stopped, stop := context.WithCancel(context.Background())
	return &Hub{feed: feed, load: load, log: opts.Logger, buffer: opts.Buffer,
		kick: make(chan struct{}, 1), users: map[string][]*Sub{},
		ready: make(chan struct{}), stopped: stopped, stop: stop}
}

// commit records n from the feed and wakes Run; it never blocks.
func (h *Hub) commit(n int64) {
	for old := h.horizon.Load(); n > old; old = h.horizon.Load() {
		if h.horizon.CompareAndSwap(old, n) {
			break
		}
	}
	select {
	case h.kick <- struct{}{}:
	default:
	}
}

func (h *Hub) isReady() bool {
	select {
	case <-h.ready:
		return true
	default:
		return false
	}
}

// Run follows the feed and dispatches frames until ctx ends; then every
// subscriber's Done closes. A failing feed or loader is logged and retried.
func (h *Hub) Run(ctx context.Context) error {
	defer h.stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); h.follow(ctx) }()
	defer wg.Wait()
	retry := time.NewTimer(time.Hour)
	defer retry.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-h.kick:
		case <-retry.C:
		}
		if !h.isReady() {
			h.pos.Store(h.horizon.Load())
			close(h.ready)
			continue
		}
		if err := h.catchUp(ctx, h.horizon.Load()); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			h.log.Error("stream hub: load events", "err", err)
			retry.Reset(retryDelay)
		}
	}
}

// follow runs the feed, again after a failure, until ctx ends.
func (h *Hub) follow(ctx context.Context) {
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		err := h.feed.Follow(ctx, h.commit)
		if ctx.Err() != nil {
			return
		}
		h.log.Error("stream hub: follow the event log", "err", err)
		t.Reset(retryDelay)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// catchUp loads and dispatches pages until pos reaches n.
func (h *Hub) catchUp(ctx context.Context, n int64) error {
	for pos := h.pos.Load(); pos < n; pos = h.pos.Load() {
		if h.skipUnwatched(n) {
			return nil
		}
		frames, reached, err := h.load(ctx, pos, n)
		if err != nil {
			return err
		}
		if reached <= pos || reached > n {
			return fmt.Errorf("loader read up to %d, want in (%d, %d]", reached, pos, n)
		}
		h.dispatch(frames, reached)
	}
	return nil
}

// skipUnwatched moves pos to n without loading anything when no stream is
// open: then there is nobody to read events and messages for, and a send
// costs no more than it did before the hub. It holds the lock Subscribe
// takes, so a stream that opens afterwards starts from n and reads those
// events from the database.
func (h *Hub) skipUnwatched(n int64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.users) > 0 {
		return false
	}
	h.pos.Store(n)
	return true
}

// dispatch offers frames to their users' subscribers, then moves pos to
// reached, all under one read lock.
func (h *Hub) dispatch(frames []*Frame, reached int64) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	for _, f := range frames {
		for _, s := range h.users[f.User] {
			s.offer(f, reached)
		}
	}
	h.pos.Store(reached)
}

// Position is the id up to which every event has been offered.
func (h *Hub) Position() int64 { return h.pos.Load() }

// Subscribe registers a subscriber for user's frames. It returns the
// subscriber and the position from which it gets every frame: frames of
// events with id ≤ pos are the caller's to read from the database; frames
// after pos arrive on Frames (and may include some ≤ pos, which the caller
// skips by id). It waits until the hub has started, ctx ends or the hub
// stops.
func (h *Hub) Subscribe(ctx context.Context, user string) (*Sub, int64, error) {
	select {
	case <-h.ready:
	case <-h.stopped.Done():
		return nil, 0, ErrStopped
	case <-ctx.Done():
		return nil, 0, ctx.Err()
	}
	s := &Sub{h: h, user: user, ch: make(chan *Frame, h.buffer)}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped.Err() != nil {
		return nil, 0, ErrStopped
	}
	h.users[user] = append(h.users[user], s)
	return s, h.pos.Load(), nil
}

// Dropped counts the frames the hub did not hand to a subscriber because
// its buffer was full; each one was read from the database instead.
func (h *Hub) Dropped() int64 { return h.dropped.Load() }

// Subscribers returns how many subscribers are registered.
func (h *Hub) Subscribers() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	n := 0
	for _, subs := range h.users {
		n += len(subs)
	}
	return n
}

// Sub is one subscriber: a live stream.
type Sub struct {
	h    *Hub
	user string
	ch   chan *Frame
	// lost is 0, or the id up to which the subscriber must read from the
	// database because frames were dropped while its buffer was full.
	lost   atomic.Int64
	closed sync.Once
}

func (s *Sub) offer(f *Frame, upTo int64) {
	select {
	case s.ch <- f:
	default:
		// Full: drop the frame and every other until the subscriber
		// reads. Every dropped frame has an id ≤ upTo.
		s.lost.Store(upTo)
		s.h.dropped.Add(1)
	}
}

// Frames delivers the frames of the subscriber's user in id order, with
// gaps only where Lost says.
func (s *Sub) Frames() <-chan *Frame { return s.ch }

// Lost returns 0, or n when frames up to id n were dropped since the last
// call: the subscriber then reads its events up to n from the database and
// skips buffered frames with ids ≤ n. Call it before each receive from
// Frames.
func (s *Sub) Lost() int64 {
	if s.lost.Load() == 0 {
		return 0
	}
	return s.lost.Swap(0)
}

// Done is closed when the hub stops.
func (s *Sub) Done() <-chan struct{} { return s.h.stopped.Done() }

// Stopped reports whether the hub has stopped.
func (s *Sub) Stopped() bool { return s.h.stopped.Err() != nil }

// AfterStop calls f in its own goroutine once the hub has stopped (at once
// if it has), like context.AfterFunc, whose stop it returns. A stream that
// waits on several things can have each of them wake it on one channel of
// its own, instead of waiting on the channel every stream shares.
func (s *Sub) AfterStop(f func()) (stop func() bool) { return context.AfterFunc(s.h.stopped, f) }

// Close unregisters the subscriber.
func (s *Sub) Close() {
	s.closed.Do(func() {
		h := s.h
		h.mu.Lock()
		defer h.mu.Unlock()
		subs := h.users[s.user]
		for i, x := range subs {
			if x == s {
				subs[i] = subs[len(subs)-1]
				subs[len(subs)-1] = nil
				subs = subs[:len(subs)-1]
				break
			}
		}
		if len(subs) == 0 {
			delete(h.users, s.user)
		} else {
			h.users[s.user] = subs
		}
	})
}
