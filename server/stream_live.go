package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/heraldhq/herald/hub"
)

// heartbeat keeps idle streams (and the proxies in front of them) open.
const heartbeat = 15 * time.Second

// streamWriteTimeout drops a stream whose client takes no data for this
// long; its frames wait in no buffer meanwhile (the hub drops them), and
// the client resumes with Last-Event-ID.
const streamWriteTimeout = 30 * time.Second

// catchUpPage bounds one database read of a stream that catches up.
const catchUpPage = 200

// maxBatch bounds how many frames a stream writes before it flushes.
const maxBatch = 64

// rearm is how old a stream's write deadline may get before a write sets
// a new one: setting it takes the runtime's timer lock, which every
// stream's every event would contend for. A write still gets at least
// streamWriteTimeout - rearm.
const rearm = time.Second

// errSignedOut ends a stream whose credential stopped working.
var errSignedOut = errors.New("stream: credential no longer valid")

// errClientGone ends a stream whose client left or stopped taking data.
var errClientGone = errors.New("stream: client gone")

// liveStream is one open live stream: GET /v1/stream, or an ntfy
// subscription (out writes its format, check re-checks its credential).
type liveStream struct {
	s   *Server
	out streamOut
	r   *http.Request
	who *principal
	sub *hub.Sub
	// check reports whether the stream's credential still works, and until
	// when it does for certain (zero: no expiry of its own).
	check func() (bool, time.Time)
	// every is the interval of the stream's heartbeats.
	every time.Duration
	// last is the stream's watermark: every event of the user with an id
	// up to it has been written, or was written before (Last-Event-ID).
	last int64
	// changes is the credential change count when the credential was last
	// checked, expires when that check stops holding by itself.
	changes int64
	expires time.Time
	// wake tells run to look up from its frames: the request ended, the
	// server closes its streams, the hub stopped, or beat is due. It is
	// the stream's own, so a stream waiting for frames waits on no channel
	// that every stream shares (their locks were contended at each event)
	// and on no timer channel (blocking on one adds and removes a timer).
	wake chan struct{}
	beat atomic.Bool
}

// streamOut is how a live stream writes: GET /v1/stream's Server-Sent
// Events (sseOut), or an ntfy subscription's lines or WebSocket messages.
type streamOut interface {
	// frame writes f; a frame that is not for this stream writes nothing.
	frame(f *hub.Frame) error
	// heartbeat writes what keeps an idle stream (and proxies) open.
	heartbeat() error
	flush() error
	// arm gives the writes that follow their deadline.
	arm()
}

func (s *Server) newLiveStream(out streamOut, r *http.Request, who *principal, sub *hub.Sub, after int64) *liveStream {
	return &liveStream{s: s, out: out, r: r, who: who, sub: sub, last: after,
		check:   func() (bool, time.Time) { return s.stillSignedIn(r, who) },
		every:   time.Duration(s.heartbeat.Load()),
		changes: s.credChanges.Load(), expires: who.expires, wake: make(chan struct{}, 1)}
}

// sseOut writes GET /v1/stream's frames, which the hub encoded as
// Server-Sent Events.
type sseOut struct {
	w  http.ResponseWriter
	rc *http.ResponseController
	// armed is when the write deadline was last set.
	armed time.Time
}

func newSSEOut(w http.ResponseWriter) *sseOut {
	return &sseOut{w: w, rc: http.NewResponseController(w)}
}

func (o *sseOut) frame(f *hub.Frame) error {
	_, err := o.w.Write(f.Data)
	return err
}

func (o *sseOut) heartbeat() error {
	_, err := io.WriteString(o.w, ": heartbeat\n\n")
	return err
}

// arm gives the writes that follow streamWriteTimeout to complete, less
// rearm at most. The deadline is the real clock's: the connection's, not
// the server's.
func (o *sseOut) arm() {
	now := time.Now()
	if now.Sub(o.armed) < rearm {
		return
	}
	o.armed = now
	_ = o.rc.SetWriteDeadline(now.Add(streamWriteTimeout))
}

func (o *sseOut) flush() error { return o.rc.Flush() }

// ended logs why a stream ended when it is worth knowing.
func (ls *liveStream) ended(err error) {
	if err != nil && !errors.Is(err, errSignedOut) && !errors.Is(err, errClientGone) && ls.r.Context().Err() == nil {
		ls.s.log.WarnContext(ls.r.Context(), "stream: ended", "err", err)
	}
}

// poke wakes run; it never blocks.
func (ls *liveStream) poke() {
	select {
	case ls.wake <- struct{}{}:
	default:
	}
}

// run writes the hub's frames until the client leaves, the credential stops
// working, the server shuts down or a write fails.
func (ls *liveStream) run(ctx context.Context) error {
	stops := []func() bool{
		context.AfterFunc(ctx, ls.poke),
		context.AfterFunc(ls.s.streams, ls.poke),
		ls.sub.AfterStop(ls.poke),
	}
	every := ls.every
	beat := time.AfterFunc(firstBeat(every, *ls.s.beatOffset.Load()), func() { ls.beat.Store(true); ls.poke() })
	defer func() {
		beat.Stop()
		for _, stop := range stops {
			stop()
		}
	}()
	for {
		select {
		case f := <-ls.sub.Frames():
			if err := ls.deliver(ctx, f); err != nil {
				return err
			}
		case <-ls.wake:
			if ctx.Err() != nil || ls.s.streams.Err() != nil || ls.sub.Stopped() {
				return nil
			}
			if ls.beat.Swap(false) {
				if err := ls.heartbeat(); err != nil {
					return err
				}
				beat.Reset(every)
			}
		}
	}
}

// offsetFunc returns a random number in [0, n).
type offsetFunc func(n int64) int64

// firstBeat is how long a new stream waits for its first heartbeat, and so
// for its first credential check: a random offset within every, at least
// a nanosecond. Streams opened together (every client reconnecting after a
// restart) then check their credentials spread over the interval, each
// every interval after its first, instead of all at once at every beat.
func firstBeat(every time.Duration, offset offsetFunc) time.Duration {
	if every <= 0 {
		return every
	}
	return time.Duration(offset(int64(every))) + 1
}

// heartbeat re-checks the credential and writes a heartbeat, which keeps
// proxies from closing an idle stream.
func (ls *liveStream) heartbeat() error {
	if !ls.signedIn(true) {
		return errSignedOut
	}
	ls.out.arm()
	if err := ls.out.heartbeat(); err != nil {
		return fmt.Errorf("%w: %w", errClientGone, err)
	}
	return ls.flush()
}

// deliver writes f and whatever else is waiting (up to maxBatch frames),
// then flushes once.
func (ls *liveStream) deliver(ctx context.Context, f *hub.Frame) error {
	if !ls.signedIn(false) {
		return errSignedOut
	}
	ls.out.arm()
	for n := 0; f != nil; n++ {
		if err := ls.write(ctx, f); err != nil {
			return err
		}
		f = nil
		if n < maxBatch {
			select {
			case f = <-ls.sub.Frames():
			default:
			}
		}
	}
	return ls.flush()
}

// write writes one frame from the hub, after reading from the database
// what the hub dropped before it, if anything.
func (ls *liveStream) write(ctx context.Context, f *hub.Frame) error {
	if lost := ls.sub.Lost(); lost > 0 {
		if err := ls.catchUp(ctx, lost); err != nil {
			return err
		}
	}
	if f.ID <= ls.last {
		return nil // read from the database already
	}
	if err := ls.out.frame(f); err != nil {
		return fmt.Errorf("%w: %w", errClientGone, err)
	}
	ls.last = f.ID
	return nil
}

// catchUp writes the user's events with ids in (last, upTo] from the
// database: a resume, or frames the hub dropped while the stream was slow.
func (ls *liveStream) catchUp(ctx context.Context, upTo int64) error {
	for ls.last < upTo {
		events, err := ls.s.st.UserEventsBetween(ctx, ls.who.user.ID, ls.last, upTo, catchUpPage)
		if err != nil {
			return err
		}
		if len(events) > 0 {
			// A credential revoked since the stream opened (logout, a
			// revoked key, a deleted user) must stop working at once, here
			// too.
			if !ls.signedIn(true) {
				return errSignedOut
			}
			frames, err := ls.s.encodeEvents(ctx, events)
			if err != nil {
				return err
			}
			ls.out.arm()
			for _, f := range frames {
				if err := ls.out.frame(f); err != nil {
					return fmt.Errorf("%w: %w", errClientGone, err)
				}
			}
			if err := ls.flush(); err != nil {
				return err
			}
		}
		if len(events) < catchUpPage {
			ls.last = upTo
			break
		}
		ls.last = events[len(events)-1].ID
	}
	return nil
}

// signedIn reports whether the stream's credential still works. Without
// force it reads the database only when a credential changed somewhere
// (the hub counts changes with every read of events) or the credential's
// own expiry has passed, so a stream costs no read per event.
func (ls *liveStream) signedIn(force bool) bool {
	changes := ls.s.credChanges.Load()
	if !force && changes == ls.changes && (ls.expires.IsZero() || ls.s.now().Before(ls.expires)) {
		return true
	}
	ok, exp := ls.check()
	if ok {
		ls.changes, ls.expires = changes, exp
	}
	return ok
}

func (ls *liveStream) flush() error {
	if err := ls.out.flush(); err != nil {
		return fmt.Errorf("%w: flush: %w", errClientGone, err)
	}
	return nil
}
