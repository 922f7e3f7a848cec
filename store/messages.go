package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Polling states of a message's response.
const (
	StatePending     = "pending"
	StateSubmitted   = "submitted"
	StateAlreadyRead = "already_read"
	StateExpired     = "expired"
	StateFailed      = "failed"
)

// ErrAlreadyResponded is returned for a second response to a message.
var ErrAlreadyResponded = errors.New("store: message already has a response")

// Message is a stored notification.
type Message struct {
	ID          string
	ChannelID   string
	OwnerID     string // the channel owner's user id
	Title       string
	Body        string
	Priority    string
	Actions     json.RawMessage // JSON array
	CallbackURL *string
	Muted       bool
	Approval    *ApprovalRule // the channel's rule when the message was sent
	State       string
	Response    json.RawMessage // the stored callback result, nil once read or expired
	SubmittedAt *time.Time
	CreatedAt   time.Time
	Delivery    *DeliveryStatus // the callback's progress, nil without one

	ApprovalStatus   string     // "" while open or without a rule
	ApprovalDeadline *time.Time // when an approval window closes

	// Outcome is what answered the message, kept after the response is
	// read; nil until answered and on approval messages.
	Outcome json.RawMessage

	// Extras is the JSON of the message's presentation details (tags,
	// click, icon and attachment URLs, markdown, the ntfy priority), nil
	// when it has none. The service owns its shape.
	Extras     json.RawMessage
	SequenceID string     // "" outside a sequence
	DeliverAt  *time.Time // when a scheduled message goes out; nil when sent at once
	Ephemeral  bool       // delivered live, then not kept
	NoPush     bool       // streamed, never pushed to phones

	// Alert, on an urgent message being created, is how it alerts: the
	// alert is stored in the same write. Nil on every other message, and
	// on messages read back (Store.Alert reads an alert).
	Alert *NewAlert
}

const messageCols = `m.id, m.channel_id, (SELECT user_id FROM channels WHERE id = m.channel_id), m.title, m.body, m.priority, m.actions, m.callback_url, m.muted,
	m.approval, m.state, m.response, m.submitted_at, m.created_at,
	d.state, d.attempts, d.last_status_code, d.next_attempt_at, COALESCE(m.approval_status, ''), m.approval_deadline, m.outcome,
	m.extras, COALESCE(m.sequence_id, ''), m.deliver_at, m.ephemeral, m.no_push`

// messageFrom joins each message with its delivery job, if any.
const messageFrom = " FROM messages m LEFT JOIN deliveries d ON d.message_id = m.id AND d.kind = 'callback' "

func scanMessage(row scanner) (*Message, error) {
	var m Message
	var actions string
	var callback, approval, response, outcome sql.NullString
	var submitted sql.NullInt64
	var created int64
	var dState sql.NullString
	var dAttempts, dCode, dNext, deadline, deliverAt sql.NullInt64
	var extras sql.NullString
	err := row.Scan(&m.ID, &m.ChannelID, &m.OwnerID, &m.Title, &m.Body, &m.Priority, &actions, &callback, &m.Muted,
		&approval, &m.State, &response, &submitted, &created, &dState, &dAttempts, &dCode, &dNext,
		&m.ApprovalStatus, &deadline, &outcome, &extras, &m.SequenceID, &deliverAt, &m.Ephemeral, &m.NoPush)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	m.Actions = json.RawMessage(actions)
	if callback.Valid {
		m.CallbackURL = &callback.String
	}
	if approval.Valid {
		m.Approval = new(ApprovalRule)
		if err := json.Unmarshal([]byte(approval.String), m.Approval); err != nil {
			return nil, fmt.Errorf("approval of %s: %w", m.ID, err)
		}
	}
	if response.Valid {
		m.Response = json.RawMessage(response.String)
	}
	if outcome.Valid {
		m.Outcome = json.RawMessage(outcome.String)
	}
	m.SubmittedAt = nullTime(submitted)
	m.CreatedAt = fromMS(created)
	m.ApprovalDeadline = nullTime(deadline)
	if extras.Valid {
		m.Extras = json.RawMessage(extras.String)
	}
	m.DeliverAt = nullTime(deliverAt)
	if dState.Valid {
		m.Delivery = &DeliveryStatus{State: dState.String, Attempts: int(dAttempts.Int64)}
		fillStatus(m.Delivery, dCode, dNext)
	}
	return &m, nil
}

// messageMarks are the topics a new message wakes, made once for each
// combination of an approval deadline (bit 0), a push (bit 1) and a
// scheduled delivery (bit 2), so that a send allocates no list of them.
var messageMarks = func() (out [8][]string) {
	for i := range out {
		out[i] = []string{TopicEvents}
		for bit, topic := range []string{TopicApprovals, TopicPush, TopicScheduled} {
			if i&(1<<bit) != 0 {
				out[i] = append(out[i], topic)
			}
		}
	}
	return out
}()

// b2i is 1 for true and 0 for false.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// CreateMessage stores m, filling ID, State and CreatedAt. It returns once the
// message is committed (durably, with synchronous=full).
func (s *Store) CreateMessage(ctx context.Context, m *Message) error {
	args, marks := s.prepareMessage(m)
	insert := func(tx *writeTx) error {
		if err := s.insertMessage(tx, m, args); err != nil {
			return err
		}
		for _, t := range marks {
			s.wake.mark(t)
		}
		return nil
	}
	var err error
	if m.SequenceID == "" && m.Alert == nil {
		err = s.insertRow(ctx, &rowWrite{ins: insertMessages, args: args, marks: marks}, insert)
	} else {
		err = s.update(ctx, insert)
	}
	return s.createError(m, err)
}

// insertMessage stores m, prepared with args (prepareMessage), inside tx:
// first, for a message of a sequence, the sequence's message still
// waiting to be delivered that it replaces; then the message, in one
// statement whose messages_created trigger records the stream event and
// queues the push job (migrations 0007, 0026, 0027); then an urgent
// message's alert.
func (s *Store) insertMessage(tx *writeTx, m *Message, args []any) error {
	if m.SequenceID != "" {
		if err := s.deleteScheduled(tx, m.ChannelID, m.SequenceID); err != nil {
			return err
		}
	}
	if _, err := tx.ExecStmt(s.st.insertMessage, args...); err != nil {
		return err
	}
	if m.Alert != nil {
		return s.insertAlert(tx, m)
	}
	return nil
}

// Answerable reports whether anything can answer a message with these
// stored actions (Message.Actions): a button or a form, or, on an
// approval message, a vote. Links answer nothing. A message nothing can
// answer stays pending until it is deleted, so a sender waiting for its
// answer would wait in vain.
func Answerable(actions json.RawMessage, approval bool) bool {
	if approval {
		return true
	}
	if len(actions) == 0 {
		return false // none stored
	}
	var acts []struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(actions, &acts) != nil {
		return true // not ours to judge: let the sender wait
	}
	for _, a := range acts {
		if a.Type == "button" || a.Type == "form" || a.Type == "http" {
			return true
		}
	}
	return false
}

// createError is the error of a failed create of message m.
func (s *Store) createError(m *Message, err error) error {
	if isForeignKey(err) {
		// The channel was deleted (by another process, after a cached
		// token lookup): as if the token were unknown.
		s.tokens.invalidate()
		return fmt.Errorf("store: create message: channel %s: %w", m.ChannelID, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("store: create message: %w", err)
	}
	return nil
}

// prepareMessage fills m's ID, State and CreatedAt and returns the
// arguments of its insert and the topics its commit wakes.
func (s *Store) prepareMessage(m *Message) (args []any, marks []string) {
	m.State = StatePending
	m.CreatedAt = s.now().UTC().Truncate(time.Millisecond)
	m.ID = NewSortableID("msg_", m.CreatedAt)
	if len(m.Actions) == 0 {
		m.Actions = json.RawMessage("[]")
	}
	var deadline any
	if m.Approval != nil {
		// A scheduled approval's window opens when it is delivered.
		start := m.CreatedAt
		if m.DeliverAt != nil {
			start = *m.DeliverAt
		}
		d := start.Add(time.Duration(m.Approval.WindowSeconds) * time.Second)
		m.ApprovalDeadline = &d
		deadline = ms(d)
	}
	args = []any{m.ID, m.ChannelID, m.Title, m.Body, m.Priority, string(m.Actions), m.CallbackURL, m.Muted,
		approvalJSON(m.Approval), m.State, ms(m.CreatedAt), deadline,
		nullText(m.Extras), nullString(m.SequenceID), nullMS(m.DeliverAt), m.Ephemeral, m.NoPush}
	// The pusher checks cheaply whether a job is due.
	return args, messageMarks[b2i(deadline != nil)|b2i(!m.Muted)<<1|b2i(m.DeliverAt != nil)<<2]
}

// Message returns a message by id, whoever owns it; callers check access.
func (s *Store) Message(ctx context.Context, id string) (*Message, error) {
	m, err := scanMessage(s.read.QueryRowContext(ctx, "SELECT "+messageCols+messageFrom+"WHERE m.id = ?", id))
	if err != nil {
		return nil, fmt.Errorf("store: message %s: %w", id, err)
	}
	return m, nil
}

// DeleteMessage deletes a message in a channel the user owns.
func (s *Store) DeleteMessage(ctx context.Context, userID, id string) error {
	err := s.update(ctx, func(tx *writeTx) error {
		var n int
		if err := tx.QueryRow("SELECT count(*) FROM messages WHERE id = ? AND channel_id IN (SELECT id FROM channels WHERE user_id = ?)",
			id, userID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return ErrNotFound
		}
		if err := s.insertEvent(tx, EventDeleted, id); err != nil {
			return err
		}
		_, err := tx.Exec("DELETE FROM messages WHERE id = ?", id)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: delete message %s: %w", id, err)
	}
	return nil
}

// Respond stores the one response a message can have: the callback result
// JSON, submitted at at. A message that is no longer pending is
// ErrAlreadyResponded, and its first response stays. A callback, when given,
// is queued in the same transaction: the outbox, so a crash loses neither.
func (s *Store) Respond(ctx context.Context, id string, result json.RawMessage, at time.Time, callback *NewDelivery) error {
	return s.RespondWithOutcome(ctx, id, result, nil, at, callback)
}

// RespondWithOutcome is Respond that also keeps outcome, what answered the
// message, for its owner to read after the response is polled away.
func (s *Store) RespondWithOutcome(ctx context.Context, id string, result, outcome json.RawMessage, at time.Time, callback *NewDelivery) error {
	return s.RespondWithJobs(ctx, id, result, outcome, at, callback, nil, nil)
}

// AlertAcking acknowledges an urgent message's alert with the answer that
// carries it (AcknowledgeAlert); nil on other messages.
type AlertAcking struct {
	Ack    AlertAck
	Notice AlertNotice
}

// RespondWithJobs is RespondWithOutcome that also queues action, the
// request of a tapped http action, when not nil, and acknowledges the
// message's alert with ack, when not nil (and still active): in the same
// transaction.
func (s *Store) RespondWithJobs(ctx context.Context, id string, result, outcome json.RawMessage, at time.Time,
	callback, action *NewDelivery, ack *AlertAcking) error {
	var kept sql.NullString
	if outcome != nil {
		kept = sql.NullString{String: string(outcome), Valid: true}
	}
	err := s.update(ctx, func(tx *writeTx) error {
		err := execOne(tx, `UPDATE messages SET state = ?, response = ?, submitted_at = ?, outcome = ? WHERE id = ? AND state = ?`,
			StateSubmitted, string(result), ms(at), kept, id, StatePending)
		if errors.Is(err, ErrNotFound) {
			var n int
			if err := tx.QueryRow("SELECT count(*) FROM messages WHERE id = ?", id).Scan(&n); err != nil {
				return err
			}
			if n == 0 {
				return ErrNotFound
			}
			return ErrAlreadyResponded
		}
		if err != nil {
			return err
		}
		if err := s.insertEvent(tx, EventUpdated, id); err != nil {
			return err
		}
		if err := s.queueUpdatePush(tx, id); err != nil {
			return err
		}
		if action != nil {
			if err := s.insertDelivery(tx, id, action, at); err != nil {
				return err
			}
		}
		if ack != nil {
			if _, err := s.ackAlert(tx, id, ack.Ack, ack.Notice); err != nil {
				return err
			}
		}
		if callback == nil {
			return nil
		}
		return s.insertDelivery(tx, id, callback, at)
	})
	if err != nil {
		return fmt.Errorf("store: respond to %s: %w", id, err)
	}
	return nil
}

// Poll is what the polling endpoint reports.
type Poll struct {
	State       string
	Response    json.RawMessage // set only with StateSubmitted
	SubmittedAt time.Time
	// Set only with StatePending: the message's actions and whether it is
	// an approval, from which the rules tell whether anything can answer it.
	Actions  json.RawMessage
	Approval bool
	// Priority is the message's, whatever its state: an urgent message's
	// poll also reports its alert.
	Priority string
}

// ReadResponse is the polling read of message id in channelID. A submitted
// response younger than expireBefore is returned once and cleared in the same
// statement, so of any number of concurrent polls exactly one gets it; an
// older one reads as expired.
func (s *Store) ReadResponse(ctx context.Context, channelID, id string, expireBefore time.Time) (Poll, error) {
	state, submitted, pending, err := s.pollState(ctx, channelID, id)
	if err != nil {
		return Poll{}, err
	}
	prio := pending.Priority
	switch {
	case state == StatePending:
		return pending, nil
	case state != StateSubmitted:
		return Poll{State: state, Priority: prio}, nil
	case !submitted.After(expireBefore):
		return Poll{State: StateExpired, Priority: prio}, nil
	}
	var p Poll
	err = s.update(ctx, func(tx *writeTx) error {
		var resp string
		var at int64
		err := tx.QueryRow(`SELECT response, submitted_at FROM messages
			WHERE id = ? AND state = ? AND submitted_at > ?`, id, StateSubmitted, ms(expireBefore)).Scan(&resp, &at)
		if errors.Is(err, sql.ErrNoRows) {
			return nil // another poll won, or it just expired: read the state again below
		}
		if err != nil {
			return err
		}
		// The writer is the only connection that writes, and this runs inside
		// its transaction: nothing can change the row between these two.
		if _, err := tx.Exec(`UPDATE messages SET state = ?, response = NULL WHERE id = ?`, StateAlreadyRead, id); err != nil {
			return err
		}
		if err := s.insertEvent(tx, EventUpdated, id); err != nil {
			return err
		}
		p = Poll{State: StateSubmitted, Response: json.RawMessage(resp), SubmittedAt: fromMS(at), Priority: prio}
		return nil
	})
	if err != nil {
		return Poll{}, fmt.Errorf("store: read response %s: %w", id, err)
	}
	if p.State != "" {
		return p, nil
	}
	state, submitted, _, err = s.pollState(ctx, channelID, id)
	if err != nil {
		return Poll{}, err
	}
	if state == StateSubmitted && !submitted.After(expireBefore) {
		state = StateExpired
	}
	return Poll{State: state, Priority: prio}, nil
}

// pollState reads a message's polling state and, when it is pending, the
// Poll to answer with (its actions are read only then); its Priority is
// set whatever the state.
func (s *Store) pollState(ctx context.Context, channelID, id string) (string, time.Time, Poll, error) {
	var state, prio string
	var submitted sql.NullInt64
	var actions sql.NullString
	var approval bool
	err := s.read.QueryRowContext(ctx, `SELECT state, submitted_at, CASE WHEN state = ? THEN actions END, approval IS NOT NULL, priority
		FROM messages WHERE id = ? AND channel_id = ?`, StatePending, id, channelID).
		Scan(&state, &submitted, &actions, &approval, &prio)
	if errors.Is(err, sql.ErrNoRows) {
		return "", time.Time{}, Poll{}, fmt.Errorf("store: poll %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return "", time.Time{}, Poll{}, fmt.Errorf("store: poll %s: %w", id, err)
	}
	return state, fromMS(submitted.Int64), Poll{State: state, Actions: json.RawMessage(actions.String), Approval: approval,
		Priority: prio}, nil
}

// nullText stores an absent JSON document as NULL.
func nullText(doc json.RawMessage) any {
	if len(doc) == 0 {
		return nil
	}
	return string(doc)
}
