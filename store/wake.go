package store

import (
	"sync"
	"sync/atomic"
)

// Topics a committed write can wake.
const (
	TopicDeliveries = "deliveries"
)

// wakeups lets workers sleep until a write they care about has committed.
// Writes mark topics while their transaction runs; the writer signals them
// only after the commit, so a woken worker always finds the rows.
type wakeups struct {
	mu     sync.Mutex
	chans  map[string]chan struct{}              // one worker per topic
	subs   map[string]map[chan struct{}]struct{} // any number of listeners (live streams)
	marked map[string]bool                       // touched only by the writer goroutine

	// events is the newest event id the SQLite writer read inside its
	// last transaction that wrote events, stored before that commit's
	// wake-up (sqliteBatch.flush); 0 when unknown (PostgreSQL, or the
	// read failed): FollowEvents then asks a reader.
	events atomic.Int64
	// pendingEvents is what the running transaction read, for fire;
	// touched only by the writer goroutine.
	pendingEvents int64
	// followers counts the FollowEvents running: with none (the command
	// line, a test of the send path), the writer reads no horizon.
	followers atomic.Int32
}

func newWakeups() *wakeups {
	return &wakeups{chans: map[string]chan struct{}{}, subs: map[string]map[chan struct{}]struct{}{}, marked: map[string]bool{}}
}

func (w *wakeups) ch(topic string) chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	c, ok := w.chans[topic]
	if !ok {
		c = make(chan struct{}, 1)
		w.chans[topic] = c
	}
	return c
}

// mark notes that the running transaction wrote to topic.
func (w *wakeups) mark(topic string) { w.marked[topic] = true }

// fire signals every marked topic; called after a commit.
func (w *wakeups) fire() {
	if w.marked[TopicEvents] {
		w.events.Store(w.pendingEvents)
	}
	w.pendingEvents = 0
	for t := range w.marked {
		w.signal(t)
		delete(w.marked, t)
	}
}

// discard forgets what a transaction that did not commit marked.
func (w *wakeups) discard() {
	clear(w.marked)
	w.pendingEvents = 0
}

func (w *wakeups) signal(topic string) {
	signal := func(c chan struct{}) {
		select {
		case c <- struct{}{}:
		default: // already signalled; one pending signal is enough
		}
	}
	signal(w.ch(topic))
	w.mu.Lock()
	for c := range w.subs[topic] {
		signal(c)
	}
	w.mu.Unlock()
}

// Subscribe returns a channel of its own that receives after commits that
// wrote to topic, for as many listeners as there are; call cancel when done.
func (s *Store) Subscribe(topic string) (<-chan struct{}, func()) {
	c := make(chan struct{}, 1)
	w := s.wake
	w.mu.Lock()
	if w.subs[topic] == nil {
		w.subs[topic] = map[chan struct{}]struct{}{}
	}
	w.subs[topic][c] = struct{}{}
	w.mu.Unlock()
	return c, func() {
		w.mu.Lock()
		delete(w.subs[topic], c)
		w.mu.Unlock()
	}
}

// Wakeup returns a channel that receives after a commit that wrote to topic.
// Signals coalesce: one receive may stand for many commits.
func (s *Store) Wakeup(topic string) <-chan struct{} { return s.wake.ch(topic) }

// Poke signals topic's waiters without a write, e.g. when a worker frees up.
func (s *Store) Poke(topic string) { s.wake.signal(topic) }
