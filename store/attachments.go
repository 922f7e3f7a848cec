package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// AttachmentInfo is what a message's extras say of its attachment: a file
// Herald keeps (ID set), or a link it did not fetch (URL and Error set).
// Listing messages reads it from the extras, with no join.
type AttachmentInfo struct {
	ID          string `json:"id,omitempty"`
	Name        string `json:"name"`
	ContentType string `json:"content_type,omitempty"` // sniffed from the bytes, never the sender's claim
	Size        int64  `json:"size,omitempty"`
	Image       bool   `json:"image,omitempty"`     // a PNG, JPEG, GIF or WebP shown inline
	Thumbnail   bool   `json:"thumbnail,omitempty"` // a smaller JPEG of it is kept too
	Width       int    `json:"width,omitempty"`
	Height      int    `json:"height,omitempty"`
	// URL and Error: a file named by URL that was kept as a link, and why.
	URL   string `json:"url,omitempty"`
	Error string `json:"error,omitempty"`
}

// Stored reports whether a is a file Herald keeps, not a link.
func (a *AttachmentInfo) Stored() bool { return a != nil && a.ID != "" }

// Attachment is a stored file with its message and owner.
type Attachment struct {
	AttachmentInfo
	MessageID string
	UserID    string    // the channel owner, whose quota it counts against
	Data      []byte    // the file
	CreatedAt time.Time // also the message's
}

// NewAttachmentID returns a new attachment id. The service takes one before
// the message is stored, so that the message's extras can name it.
func NewAttachmentID() string { return NewID("att_") }

// QuotaError is ErrLimit for bytes: the user keeps Have bytes of files, a
// new one of Size would take them over Max. errors.Is(err, ErrLimit) holds.
type QuotaError struct {
	Have, Size, Max int64
}

func (e *QuotaError) Error() string {
	return fmt.Sprintf("store: quota: %d bytes kept, %d more would pass %d", e.Have, e.Size, e.Max)
}

// Is makes a *QuotaError match ErrLimit.
func (e *QuotaError) Is(target error) bool { return target == ErrLimit }

// CreateMessageWithAttachment is CreateMessage for a message that carries
// a file: the message, its events and push job (and an urgent message's
// alert), and the file (with its thumbnail) commit together or not at
// all. a.ID, Name, ContentType, Size, Width, Height and Data must be set
// (m's extras already name a.ID); thumb is the thumbnail, nil for none. quota bounds the bytes of
// files a.UserID keeps, this one included; 0 is none. It is checked in
// the same write as the insert, so concurrent uploads cannot together
// pass it: a *QuotaError then, and nothing is stored.
func (s *Store) CreateMessageWithAttachment(ctx context.Context, m *Message, a *Attachment, thumb []byte, quota int64) error {
	args, marks := s.prepareMessage(m)
	a.MessageID, a.CreatedAt, a.Size = m.ID, m.CreatedAt, int64(len(a.Data))
	err := s.update(ctx, func(tx *writeTx) error {
		if err := underQuota(tx, a.UserID, a.Size, quota); err != nil {
			return err
		}
		if err := s.insertMessage(tx, m, args); err != nil {
			return err
		}
		if _, err := tx.Exec(`INSERT INTO attachments (id, message_id, user_id, name, content_type, size, data, thumbnail,
				width, height, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			a.ID, a.MessageID, a.UserID, a.Name, a.ContentType, a.Size, a.Data, nullBlob(thumb),
			nullInt(a.Width), nullInt(a.Height), ms(a.CreatedAt)); err != nil {
			return err
		}
		for _, t := range marks {
			s.wake.mark(t)
		}
		return nil
	})
	return s.createError(m, err)
}

// underQuota fails with a *QuotaError when size more bytes would take
// userID's files over max (max <= 0: no quota). Like underCap, it must
// run in the write that then inserts.
func underQuota(tx *writeTx, userID string, size, max int64) error {
	if max <= 0 {
		return nil
	}
	var have int64
	if err := tx.QueryRow("SELECT CAST(COALESCE(SUM(size), 0) AS BIGINT) FROM attachments WHERE user_id = ?", userID).Scan(&have); err != nil {
		return err
	}
	if have+size > max {
		return &QuotaError{Have: have, Size: size, Max: max}
	}
	return nil
}

// Attachment returns attachment id without its bytes (Data is nil):
// what it is, and the message that decides who may read it.
func (s *Store) Attachment(ctx context.Context, id string) (*Attachment, error) {
	var a Attachment
	var width, height sql.NullInt64
	var created int64
	err := s.read.QueryRowContext(ctx, `SELECT id, message_id, user_id, name, content_type, size, thumbnail IS NOT NULL,
			width, height, created_at FROM attachments WHERE id = ?`, id).
		Scan(&a.ID, &a.MessageID, &a.UserID, &a.Name, &a.ContentType, &a.Size, &a.Thumbnail, &width, &height, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: attachment %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: attachment %s: %w", id, err)
	}
	// Only a picture has its size kept.
	a.Image = width.Valid && height.Valid
	a.Width, a.Height, a.CreatedAt = int(width.Int64), int(height.Int64), fromMS(created)
	return &a, nil
}

// AttachmentData returns the bytes of attachment id, or of its thumbnail
// when thumbnail is set: ErrNotFound when there are none (it was deleted,
// or has no thumbnail).
func (s *Store) AttachmentData(ctx context.Context, id string, thumbnail bool) ([]byte, error) {
	q := "SELECT data FROM attachments WHERE id = ?"
	if thumbnail {
		q = "SELECT thumbnail FROM attachments WHERE id = ?"
	}
	var data []byte
	err := s.read.QueryRowContext(ctx, q, id).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && data == nil) {
		return nil, fmt.Errorf("store: attachment %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: attachment %s: %w", id, err)
	}
	return data, nil
}

// AttachmentBytes is how many bytes of files userID keeps.
func (s *Store) AttachmentBytes(ctx context.Context, userID string) (int64, error) {
	var n int64
	err := s.read.QueryRowContext(ctx, "SELECT CAST(COALESCE(SUM(size), 0) AS BIGINT) FROM attachments WHERE user_id = ?", userID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: attachment bytes of %s: %w", userID, err)
	}
	return n, nil
}

// nullBlob stores an absent blob as NULL.
func nullBlob(b []byte) any {
	if b == nil {
		return nil
	}
	return b
}

// nullInt stores 0 as NULL.
func nullInt(n int) any {
	if n == 0 {
		return nil
	}
	return int64(n)
}
