package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ErrInvalidFolder is returned when a channel is put into a folder that does
// not exist or belongs to someone else.
var ErrInvalidFolder = errors.New("store: no such folder")

// ApprovalRule is a channel's multi-signature rule.
type ApprovalRule struct {
	RequiredCount int      `json:"required_count"`
	Approvers     []string `json:"approvers"`
	WindowSeconds int      `json:"window_seconds"`
}

// Channel is a destination for messages, owned by one user.
type Channel struct {
	ID            string
	UserID        string
	Name          string
	Icon          string
	Color         string
	MutedUntil    *time.Time
	FolderID      *string
	WebhookToken  string
	WebhookSecret string
	Approval      *ApprovalRule
	// SourceSecret is what incoming alert and forge webhooks must present;
	// empty: none.
	SourceSecret string
	// Template turns any JSON webhook into a message; nil: none.
	Template *Template
	// Urgent is the channel's policy for urgent messages; nil: it
	// refuses them.
	Urgent    *UrgentPolicy
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Template is a channel's message template: each field a Go text/template
// over the incoming JSON. service parses and runs them.
type Template struct {
	Title    string `json:"title"`
	Body     string `json:"body"`
	Priority string `json:"priority,omitempty"`
	URL      string `json:"url,omitempty"`
}

// UrgentPolicy is how a channel's urgent messages alert: repeated every
// RepeatSeconds until acknowledged, for at most ExpireSeconds, reaching
// the next person of Escalation (user ids or lower-cased email addresses,
// each an invitation) every EscalateAfterSeconds (0: never). service
// checks it.
type UrgentPolicy struct {
	RepeatSeconds        int      `json:"repeat_seconds"`
	ExpireSeconds        int      `json:"expire_seconds"`
	EscalateAfterSeconds int      `json:"escalate_after_seconds"`
	Escalation           []string `json:"escalation"`
}

// Muted reports whether the channel is muted at t.
func (c *Channel) Muted(t time.Time) bool { return c.MutedUntil != nil && c.MutedUntil.After(t) }

// Optional is a PATCH field: absent (Set false), null (Set, Value nil) or a value.
type Optional[T any] struct {
	Set   bool
	Value *T
}

// ChannelPatch holds the fields a PATCH changes; nil pointers stay as they are.
type ChannelPatch struct {
	Name       *string
	Icon       *string
	Color      *string
	MutedUntil Optional[time.Time]
	FolderID   Optional[string]
	Approval   Optional[ApprovalRule]
	// SourceSecret: "" clears it.
	SourceSecret *string
	Template     Optional[Template]
	Urgent       Optional[UrgentPolicy]
}

const channelCols = `c.id, c.user_id, c.name, c.icon, c.color, c.muted_until, c.folder_id,
	c.webhook_token, c.webhook_secret, c.approval, c.source_secret, c.template, c.created_at, c.updated_at, c.urgent`

func scanChannel(row scanner, extra ...any) (*Channel, error) {
	var c Channel
	var muted sql.NullInt64
	var folder, approval, source, tmpl, urgent sql.NullString
	var created, updated int64
	dest := append([]any{&c.ID, &c.UserID, &c.Name, &c.Icon, &c.Color, &muted, &folder,
		&c.WebhookToken, &c.WebhookSecret, &approval, &source, &tmpl, &created, &updated, &urgent}, extra...)
	if err := row.Scan(dest...); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, ErrNotFound
		}
		return nil, err
	}
	c.MutedUntil = nullTime(muted)
	if folder.Valid {
		c.FolderID = &folder.String
	}
	if approval.Valid {
		c.Approval = new(ApprovalRule)
		if err := json.Unmarshal([]byte(approval.String), c.Approval); err != nil {
			return nil, fmt.Errorf("approval rule of %s: %w", c.ID, err)
		}
	}
	c.SourceSecret = source.String
	if tmpl.Valid {
		c.Template = new(Template)
		if err := json.Unmarshal([]byte(tmpl.String), c.Template); err != nil {
			return nil, fmt.Errorf("template of %s: %w", c.ID, err)
		}
	}
	if urgent.Valid {
		c.Urgent = new(UrgentPolicy)
		if err := json.Unmarshal([]byte(urgent.String), c.Urgent); err != nil {
			return nil, fmt.Errorf("urgent policy of %s: %w", c.ID, err)
		}
	}
	c.CreatedAt, c.UpdatedAt = fromMS(created), fromMS(updated)
	return &c, nil
}

func urgentJSON(p *UrgentPolicy) any {
	if p == nil {
		return nil
	}
	b, _ := json.Marshal(p)
	return string(b)
}

func approvalJSON(r *ApprovalRule) any {
	if r == nil {
		return nil
	}
	b, _ := json.Marshal(r)
	return string(b)
}

func templateJSON(t *Template) any {
	if t == nil {
		return nil
	}
	b, _ := json.Marshal(t)
	return string(b)
}

// NewWebhookToken returns a fresh token for the send path.
func NewWebhookToken() string { return NewToken(32) }

// NewWebhookSecret returns a fresh callback signing secret.
func NewWebhookSecret() string { return "whsec_" + NewToken(32) }

// CreateChannel inserts c for c.UserID, filling ID, token, secret and
// times, whatever the user already has (users create through service, which
// passes their plan's cap to CreateChannelCapped).
func (s *Store) CreateChannel(ctx context.Context, c *Channel) error {
	return s.CreateChannelCapped(ctx, c, 0)
}

// CreateChannelCapped is CreateChannel for a user who may own at most max
// channels (max <= 0: any number). With max or more already it is a
// *LimitError and nothing is stored; concurrent creates cannot both take
// the last place (see underCap).
func (s *Store) CreateChannelCapped(ctx context.Context, c *Channel, max int) error {
	c.ID, c.WebhookToken, c.WebhookSecret = NewID("ch_"), NewWebhookToken(), NewWebhookSecret()
	c.CreatedAt = s.now().UTC().Truncate(time.Millisecond)
	c.UpdatedAt = c.CreatedAt
	err := s.update(ctx, func(tx *writeTx) error {
		if err := underCap(tx, "channels", c.UserID, max); err != nil {
			return err
		}
		_, err := tx.Exec(`INSERT INTO channels
			(id, user_id, name, icon, color, muted_until, folder_id, webhook_token, webhook_secret, approval, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, NULL, ?, ?)`,
			c.ID, c.UserID, c.Name, c.Icon, c.Color, nullMS(c.MutedUntil), c.WebhookToken, c.WebhookSecret,
			ms(c.CreatedAt), ms(c.UpdatedAt))
		return err
	})
	if err != nil {
		return fmt.Errorf("store: create channel: %w", err)
	}
	return nil
}

// ListChannels returns the channels a user owns, oldest first.
func (s *Store) ListChannels(ctx context.Context, userID string) ([]Channel, error) {
	out, _, err := s.ListChannelsPage(ctx, userID, Page{})
	return out, err
}

// ListChannelsPage returns a page of the channels a user owns, oldest
// first, and the cursor of the next page (zero on the last).
func (s *Store) ListChannelsPage(ctx context.Context, userID string, p Page) ([]Channel, Cursor, error) {
	where, args, limit := p.clauses("c.created_at", "c.id")
	rows, err := s.read.QueryContext(ctx, "SELECT "+channelCols+" FROM channels c WHERE c.user_id = ?"+where+
		" ORDER BY c.created_at, c.id"+limit, append([]any{userID}, args...)...)
	if err != nil {
		return nil, Cursor{}, fmt.Errorf("store: list channels: %w", err)
	}
	defer rows.Close()
	out := []Channel{}
	for rows.Next() {
		c, err := scanChannel(rows)
		if err != nil {
			return nil, Cursor{}, fmt.Errorf("store: list channels: %w", err)
		}
		out = append(out, *c)
	}
	if err := rows.Err(); err != nil {
		return nil, Cursor{}, fmt.Errorf("store: list channels: %w", err)
	}
	out, next := cut(out, p, func(c *Channel) Cursor { return Cursor{Key: ms(c.CreatedAt), ID: c.ID} })
	return out, next, nil
}

// Channel returns a channel the user owns; anyone else's is ErrNotFound.
func (s *Store) Channel(ctx context.Context, userID, id string) (*Channel, error) {
	c, err := scanChannel(s.read.QueryRowContext(ctx, "SELECT "+channelCols+" FROM channels c WHERE c.id = ? AND c.user_id = ?", id, userID))
	if err != nil {
		return nil, fmt.Errorf("store: channel %s: %w", id, err)
	}
	return c, nil
}

// ChannelByID returns a channel whoever owns it (for approver checks).
func (s *Store) ChannelByID(ctx context.Context, id string) (*Channel, error) {
	c, err := scanChannel(s.read.QueryRowContext(ctx, "SELECT "+channelCols+" FROM channels c WHERE c.id = ?", id))
	if err != nil {
		return nil, fmt.Errorf("store: channel %s: %w", id, err)
	}
	return c, nil
}

// ChannelByToken returns the channel with this webhook token and its owner's
// plan. Answers are cached briefly (see tokenCache): changes made through
// this store apply at once, changes by another process within a second.
func (s *Store) ChannelByToken(ctx context.Context, token string) (*Channel, string, error) {
	now := time.Now() // real time: the lifetime bounds staleness, whatever clock the store runs on
	if c, plan, ok := s.tokens.get(token, now); ok {
		return &c, plan, nil
	}
	gen := s.tokens.generation()
	var plan string
	// WithoutCancel: a point read; no watcher goroutine for a cancellable context.
	c, err := scanChannel(s.st.channelByToken.QueryRowContext(context.WithoutCancel(ctx), token), &plan)
	if err != nil {
		return nil, "", fmt.Errorf("store: channel by token: %w", err)
	}
	s.tokens.put(token, *c, plan, gen, now)
	return c, plan, nil
}

// UpdateChannel applies p to a channel the user owns and returns the result.
func (s *Store) UpdateChannel(ctx context.Context, userID, id string, p ChannelPatch) (*Channel, error) {
	return s.changeChannel(ctx, "update channel", userID, id, func(tx *writeTx, c *Channel) error {
		if p.Name != nil {
			c.Name = *p.Name
		}
		if p.Icon != nil {
			c.Icon = *p.Icon
		}
		if p.Color != nil {
			c.Color = *p.Color
		}
		if p.MutedUntil.Set {
			c.MutedUntil = p.MutedUntil.Value
		}
		if p.Approval.Set {
			c.Approval = p.Approval.Value
			if err := s.syncApprovers(tx, c, s.now()); err != nil {
				return err
			}
		}
		if p.SourceSecret != nil {
			c.SourceSecret = *p.SourceSecret
		}
		if p.Template.Set {
			c.Template = p.Template.Value
		}
		if p.Urgent.Set {
			c.Urgent = p.Urgent.Value
			if err := s.syncEscalations(tx, c, s.now()); err != nil {
				return err
			}
		}
		if p.FolderID.Set {
			c.FolderID = p.FolderID.Value
			if c.FolderID != nil {
				var n int
				if err := tx.QueryRow("SELECT count(*) FROM folders WHERE id = ? AND user_id = ?", *c.FolderID, userID).Scan(&n); err != nil {
					return err
				}
				if n == 0 {
					return ErrInvalidFolder
				}
			}
		}
		return nil
	})
}

// RegenerateToken gives a channel a new webhook token; the old one stops working at once.
func (s *Store) RegenerateToken(ctx context.Context, userID, id string) (*Channel, error) {
	return s.changeChannel(ctx, "regenerate token", userID, id, func(_ *writeTx, c *Channel) error {
		c.WebhookToken = NewWebhookToken()
		return nil
	})
}

// RotateSecret gives a channel a new signing secret, in force at once.
func (s *Store) RotateSecret(ctx context.Context, userID, id string) (*Channel, error) {
	return s.changeChannel(ctx, "rotate secret", userID, id, func(_ *writeTx, c *Channel) error {
		c.WebhookSecret = NewWebhookSecret()
		return nil
	})
}

// changeChannel reads a user's channel, lets change edit it and writes every
// mutable column back, all in one transaction.
func (s *Store) changeChannel(ctx context.Context, op, userID, id string, change func(*writeTx, *Channel) error) (*Channel, error) {
	var c *Channel
	err := s.update(ctx, func(tx *writeTx) error {
		var err error
		c, err = scanChannel(tx.QueryRow("SELECT "+channelCols+" FROM channels c WHERE c.id = ? AND c.user_id = ?", id, userID))
		if err != nil {
			return err
		}
		if err := change(tx, c); err != nil {
			return err
		}
		c.UpdatedAt = s.now().UTC().Truncate(time.Millisecond)
		_, err = tx.Exec(`UPDATE channels SET name = ?, icon = ?, color = ?, muted_until = ?, folder_id = ?,
			webhook_token = ?, webhook_secret = ?, approval = ?, source_secret = ?, template = ?, urgent = ?, updated_at = ? WHERE id = ?`,
			c.Name, c.Icon, c.Color, nullMS(c.MutedUntil), c.FolderID, c.WebhookToken, c.WebhookSecret,
			approvalJSON(c.Approval), nullString(c.SourceSecret), templateJSON(c.Template), urgentJSON(c.Urgent), ms(c.UpdatedAt), c.ID)
		return err
	})
	s.tokens.invalidate()
	if err != nil {
		return nil, fmt.Errorf("store: %s %s: %w", op, id, err)
	}
	return c, nil
}

// DeleteChannel deletes a user's channel with its messages, pins and queued
// deliveries.
// Live streams get a message.deleted event for each of its messages, for
// the owner and every approver who lists it, in the same transaction.
func (s *Store) DeleteChannel(ctx context.Context, userID, id string) error {
	err := s.update(ctx, func(tx *writeTx) error {
		now := ms(s.now())
		if _, err := tx.Exec(`INSERT INTO events (user_id, type, message_id, channel_id, created_at)
			SELECT ?1, ?2, m.id, m.channel_id, CAST(?3 AS BIGINT) FROM messages m WHERE m.channel_id = ?4
				AND EXISTS (SELECT 1 FROM channels WHERE id = ?4 AND user_id = ?1)`, userID, EventDeleted, now, id); err != nil {
			return err
		}
		if _, err := tx.Exec(`INSERT INTO events (user_id, type, message_id, channel_id, created_at)
			SELECT a.user_id, ?2, m.id, m.channel_id, CAST(?3 AS BIGINT) FROM messages m JOIN message_approvers a ON a.message_id = m.id
			WHERE m.channel_id = ?4 AND a.user_id != ?1
				AND EXISTS (SELECT 1 FROM channels WHERE id = ?4 AND user_id = ?1)`, userID, EventDeleted, now, id); err != nil {
			return err
		}
		if err := execOne(tx, "DELETE FROM channels WHERE id = ? AND user_id = ?", id, userID); err != nil {
			return err
		}
		s.wake.mark(TopicEvents)
		return nil
	})
	s.tokens.invalidate()
	if err != nil {
		return fmt.Errorf("store: delete channel %s: %w", id, err)
	}
	return nil
}
