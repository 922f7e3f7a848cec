package server

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/heraldhq/herald/hub"
	"github.com/heraldhq/herald/ntfy"
	"github.com/heraldhq/herald/service"
	"github.com/heraldhq/herald/store"
)

// How a stream event reads as ntfy's message object. Every event of a
// user's stream is one ntfy line: a message created or changed is a
// "message" with the message as it is now (an answered one without its
// buttons), a deleted one "message_delete", a cleared one "message_clear".
// The line's id is the event's (ntfyEventID), so that since=<the last id
// a client saw> resumes the event log exactly where it was; every line of
// one message shares its sequence_id (the sender's sequence id, or the
// message id), so that ntfy clients replace the notification.

// ntfyIDPrefix starts the ids of ntfy lines: an event id in base 36 after
// it, padded to ntfy's 12 characters.
const ntfyIDPrefix = "ev"

// ntfyEventID is the ntfy id of stream event id.
func ntfyEventID(id int64) string {
	s := strconv.FormatInt(id, 36)
	if len(s) < 10 {
		s = strings.Repeat("0", 10-len(s)) + s
	}
	return ntfyIDPrefix + s
}

// parseNtfyEventID is the event id of an ntfy line's id.
func parseNtfyEventID(s string) (int64, bool) {
	rest, ok := strings.CutPrefix(s, ntfyIDPrefix)
	if !ok || rest == "" || strings.ContainsFunc(rest, func(r rune) bool { return r >= 'A' && r <= 'Z' }) {
		return 0, false
	}
	n, err := strconv.ParseInt(rest, 36, 64)
	return n, err == nil && n >= 0
}

// ntfyEncoding is one frame as ntfy clients see it, made once by the
// first ntfy stream that writes it for all of the frame's user's streams:
// the JSON object around the topic (which is the token each client used)
// and the message's actions as that user may use them, whose answer URLs
// each stream makes for its own credential.
type ntfyEncoding struct {
	once sync.Once
	skip bool         // nothing to write: the message is gone
	msg  ntfy.Message // what filters and raw streams read
	due  time.Time    // when a scheduled message goes out; zero when sent at once
	// head runs up to the topic's value, tail from its closing quote to
	// before the object's closing brace.
	head, tail []byte
	actions    []ntfyAction
}

// ntfyAction is one of a message's actions for ntfy: answer, when set, is
// the Herald action key its http request answers with.
type ntfyAction struct {
	ntfy.Action
	answer string
}

// ntfyEncode returns fe as ntfy lines read it, made at the first call;
// viewer is the frame's user.
func (s *Server) ntfyEncode(fe *frameEvent, viewer *store.User) *ntfyEncoding {
	enc := &fe.ntfy
	enc.once.Do(func() { s.ntfyMake(enc, fe, viewer) })
	return enc
}

func (s *Server) ntfyMake(enc *ntfyEncoding, fe *frameEvent, viewer *store.User) {
	e, m := fe.event, fe.msg
	msg := ntfy.Message{ID: ntfyEventID(e.ID), Time: e.CreatedAt.Unix()}
	if e.ID == 0 {
		msg.ID = e.MessageID // a scheduled message before it goes out (ntfyScheduled)
	}
	switch {
	case e.Type == store.EventDeleted:
		msg.Event, msg.SequenceID = ntfy.EventMessageDelete, e.SequenceID // the message is gone: its event names the sequence
		if msg.SequenceID == "" {
			msg.SequenceID = e.MessageID
		}
	case m == nil:
		enc.skip = true // changed, then deleted: its deletion follows
		return
	case e.Type == store.EventCleared:
		msg.Event, msg.SequenceID = ntfy.EventMessageClear, ntfySequence(m)
	default:
		msg.Event, msg.SequenceID = ntfy.EventMessage, ntfySequence(m)
		s.ntfyMessage(enc, &msg, fe, viewer)
	}
	enc.msg = msg
	b, err := json.Marshal(msg)
	if err != nil {
		enc.skip = true
		return
	}
	const topic = `"topic":"`
	i := bytes.Index(b, []byte(topic)) + len(topic)
	enc.head, enc.tail = b[:i], b[i:len(b)-1]
}

// ntfySequence is the sequence id of m's lines.
func ntfySequence(m *store.Message) string {
	if m.SequenceID != "" {
		return m.SequenceID
	}
	return m.ID
}

// ntfyPriorities are Herald's priorities as ntfy's 1-5.
var ntfyPriorities = map[string]int{"low": 2, "normal": 3, "high": 4}

// ntfyMessage fills a message line: its words, extras and actions.
func (s *Server) ntfyMessage(enc *ntfyEncoding, msg *ntfy.Message, fe *frameEvent, viewer *store.User) {
	m := fe.msg
	msg.Title, msg.Message = m.Title, m.Body
	if m.DeliverAt != nil {
		enc.due = *m.DeliverAt
		msg.Time = max(msg.Time, m.DeliverAt.Unix())
	}
	x, err := store.DecodeExtras(m.Extras)
	if err != nil {
		s.log.Warn("ntfy: stored extras unreadable", "message_id", m.ID, "err", err)
	}
	msg.Priority = x.NtfyPriority
	if msg.Priority == 0 {
		msg.Priority = ntfyPriorities[m.Priority]
	}
	msg.Tags, msg.Click, msg.Icon = x.Tags, x.Click, x.Icon
	// A stored file is read through a signed link, which an ntfy app
	// fetches without credentials; a link stays the link.
	msg.Attachment = s.ntfyAttachment(s.streams, m, x.Attachment, x.Attach)
	if x.Markdown {
		msg.ContentType = "text/markdown"
	}
	enc.actions = s.ntfyActions(fe, viewer)
}

// ntfyActions are m's actions as viewer may use them from an ntfy app: a
// url action opens its page; while viewer can answer, a button (or an
// http action, which Herald makes) answers through the viewer's answer
// URL and a form opens the message in the web app. An answered message
// keeps its url actions only.
func (s *Server) ntfyActions(fe *frameEvent, viewer *store.User) []ntfyAction {
	m := fe.msg
	var actions []service.Action
	if err := json.Unmarshal(m.Actions, &actions); err != nil {
		return nil
	}
	answerable := ntfyAnswerable(fe, viewer)
	var out []ntfyAction
	for i, a := range actions {
		id := a.Key
		if id == "" {
			id = "a" + strconv.Itoa(i)
		}
		na := ntfyAction{Action: ntfy.Action{ID: id, Label: a.Label}}
		switch {
		case a.Type == "url":
			na.Action.Action, na.URL = "view", a.Value
		case a.Type == "form" && answerable:
			na.Action.Action, na.URL = "view", s.baseURL+"/#/messages/"+m.ID
		case (a.Type == "button" || a.Type == "http") && answerable:
			na.Action.Action, na.Method, na.answer = "http", "POST", a.Key
		default:
			continue
		}
		out = append(out, na)
	}
	return out
}

// ntfyAnswerable reports whether viewer can still answer fe's message, as
// the web app decides: it waits for an answer, and on an approval, the
// approval is open, names viewer and has no vote of theirs.
func ntfyAnswerable(fe *frameEvent, viewer *store.User) bool {
	m, v := fe.msg, fe.view
	if v == nil || v.Status != store.StatePending {
		return false
	}
	if m.Approval == nil {
		return true
	}
	a, ok := v.Approval.(*approvalJSON)
	if !ok || a.Status != "pending" || !service.IsApprover(m.Approval, viewer) {
		return false
	}
	return !slices.ContainsFunc(a.Votes, func(vote service.Vote) bool { return vote.UserID == viewer.ID })
}

// ntfySub is one ntfy subscription: what its lines show and which it
// writes.
type ntfySub struct {
	s      *Server
	viewer *store.User
	topics map[string]string // channel id → the topic (token) the client used
	all    string            // the topics as the path named them
	filter ntfyFilter
	// scheduled: scheduled messages are written before they go out;
	// pending holds theirs (ntfyScheduled).
	scheduled bool
	pending   []*hub.Frame
	// capability makes the answer capability of a message's action.
	capability func(messageID, action string) string
}

// line is f as this subscription's JSON object (without a newline), and
// the message it shows; ok is false when f is not for it.
func (n *ntfySub) line(f *hub.Frame) (b []byte, msg *ntfy.Message, ok bool) {
	fe, _ := f.Meta.(*frameEvent)
	if fe == nil {
		return nil, nil, false
	}
	topic, ok := n.topics[fe.event.ChannelID]
	if !ok {
		return nil, nil, false
	}
	enc := n.s.ntfyEncode(fe, n.viewer)
	if enc.skip || (!n.scheduled && enc.due.After(n.s.now())) || !n.filter.pass(&enc.msg) {
		return nil, nil, false
	}
	b = make([]byte, 0, len(enc.head)+len(topic)+len(enc.tail)+2)
	b = append(append(append(b, enc.head...), topic...), enc.tail...)
	if len(enc.actions) > 0 {
		actions := make([]ntfy.Action, len(enc.actions))
		for i, a := range enc.actions {
			actions[i] = a.Action
			if a.answer != "" {
				actions[i].URL = n.s.baseURL + ntfyAnswerPath + n.capability(fe.msg.ID, a.answer)
			}
		}
		data, err := json.Marshal(actions)
		if err != nil {
			return nil, nil, false
		}
		b = append(append(b, `,"actions":`...), data...)
	}
	return append(b, '}'), &enc.msg, true
}

// notice is an open or keepalive event of the subscription.
func (n *ntfySub) notice(event string) ([]byte, *ntfy.Message) {
	msg := &ntfy.Message{ID: store.NewToken(12), Time: n.s.now().Unix(), Event: event, Topic: n.all}
	b, _ := json.Marshal(msg)
	return b, msg
}
