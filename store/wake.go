package store

import "sync"

// Topics a committed write can wake.
const (
	TopicDeliveries = "deliveries"
)

// wakeups lets workers sleep until a write they care about has committed.
// Writes mark topics while their transaction runs; the writer signals them
// only after the commit, so a woken worker always finds the rows.
type wakeups struct {
	mu     sync.Mutex
	chans  map[string]chan struct{}
	marked map[string]bool // touched only by the writer goroutine
}

func newWakeups() *wakeups {
	return &wakeups{chans: map[string]chan struct{}{}, marked: map[string]bool{}}
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
	for t := range w.marked {
		select {
		case w.ch(t) <- struct{}{}:
		default: // already signalled; one pending signal is enough
		}
		delete(w.marked, t)
	}
}

// Wakeup returns a channel that receives after a commit that wrote to topic.
// Signals coalesce: one receive may stand for many commits.
func (s *Store) Wakeup(topic string) <-chan struct{} { return s.wake.ch(topic) }

// Poke signals topic's waiters without a write, e.g. when a worker frees up.
func (s *Store) Poke(topic string) {
	select {
	case s.wake.ch(topic) <- struct{}{}:
	default:
	}
}
