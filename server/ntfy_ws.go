package server

import (
	"context"
	"net/http"

	"github.com/coder/websocket"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/ntfy"
)

// ntfyWebSocket serves GET /<topics>/ws: the subscription's lines as
// WebSocket text messages. Any origin may open one: the credential is the
// Authorization header or ?auth=, never a cookie, so another site's page
// cannot read with the visitor's session. The client's pings are answered;
// keepalives are keepalive events, as on the other formats.
func (s *Server) ntfyWebSocket(w http.ResponseWriter, r *http.Request, rd *ntfyReader, n *ntfySub, p ntfyParams, after int64) error {
	var c *websocket.Conn
	out := &ntfyWSOut{n: n}
	accept := func() error {
		var err error
		c, err = websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
		if err != nil {
			return err // Accept answered the request
		}
		out.c, out.ctx = c, c.CloseRead(r.Context())
		return nil
	}
	defer func() {
		if c != nil {
			c.Close(websocket.StatusNormalClosure, "")
		}
	}()
	if p.poll {
		if err := accept(); err != nil {
			return nil
		}
		return s.ntfyPoll(out.ctx, rd, n, after, out.write)
	}
	return s.ntfyLive(w, r, rd, after, n.pending, out, func() (context.Context, error) {
		if err := accept(); err != nil {
			return nil, err
		}
		return out.ctx, out.write(n.notice(ntfy.EventOpen))
	})
}

// ntfyWSOut writes an ntfy subscription's lines as WebSocket messages.
type ntfyWSOut struct {
	c   *websocket.Conn
	ctx context.Context // ends when the connection closes
	n   *ntfySub
}

func (o *ntfyWSOut) frame(f *hub.Frame) error {
	b, msg, ok := o.n.line(f)
	if !ok {
		return nil
	}
	return o.write(b, msg)
}

func (o *ntfyWSOut) heartbeat() error { return o.write(o.n.notice(ntfy.EventKeepalive)) }

// write sends one message, within streamWriteTimeout.
func (o *ntfyWSOut) write(b []byte, _ *ntfy.Message) error {
	ctx, cancel := context.WithTimeout(o.ctx, streamWriteTimeout)
	defer cancel()
	return o.c.Write(ctx, websocket.MessageText, b)
}

func (o *ntfyWSOut) flush() error { return nil }

func (o *ntfyWSOut) arm() {}
