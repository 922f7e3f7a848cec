package store

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// attachmentFixture is a user with a channel on a database of its own.
type attachmentFixture struct {
	s       *Store
	owner   *User
	channel *Channel
}

func newAttachmentFixture(t *testing.T, dsn string, now func() time.Time) *attachmentFixture {
	t.Helper()
	ctx := context.Background()
	s := openFoundation(t, dsn, Options{Now: now})
	f := &attachmentFixture{s: s, owner: &User{Email: "att@example.com", Name: "att", Plan: "free"}}
	if err := s.CreateUser(ctx, f.owner); err != nil {
		t.Fatal(err)
	}
	f.channel = &Channel{UserID: f.owner.ID, Name: "gate"}
	if err := s.CreateChannel(ctx, f.channel); err != nil {
		t.Fatal(err)
	}
	return f
}

// send stores a message with data as its attachment under quota.
func (f *attachmentFixture) send(t *testing.T, data, thumb []byte, quota int64) (*Message, *Attachment, error) {
	t.Helper()
	a := &Attachment{AttachmentInfo: AttachmentInfo{ID: NewAttachmentID(), Name: "gate.jpg", ContentType: "image/jpeg",
		Image: true, Thumbnail: thumb != nil, Width: 1920, Height: 1080}, UserID: f.owner.ID, Data: data}
	extras, err := EncodeExtras(&Extras{Attachment: &a.AttachmentInfo})
	if err != nil {
		t.Fatal(err)
	}
	m := &Message{ChannelID: f.channel.ID, Title: "Person at the gate", Priority: "normal", Extras: extras}
	return m, a, f.s.CreateMessageWithAttachment(context.Background(), m, a, thumb, quota)
}

func (f *attachmentFixture) count(t *testing.T, q string, args ...any) int {
	t.Helper()
	var n int
	if err := f.s.read.QueryRowContext(context.Background(), q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestAttachmentStoredWithMessage: the file and its thumbnail read back as
// stored, the message's extras name it, and the message commits with its
// stream event as any other.
func TestAttachmentStoredWithMessage(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		f := newAttachmentFixture(t, dsn, nil)
		data := bytes.Repeat([]byte{0xff, 0xd8, 0x01, 0x00}, 50_000)
		thumb := []byte("thumbnail bytes")
		m, a, err := f.send(t, data, thumb, 0)
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.s.Attachment(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Data, err = f.s.AttachmentData(ctx, a.ID, false); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Data, data) || got.Size != int64(len(data)) || got.MessageID != m.ID || got.UserID != f.owner.ID ||
			got.Name != "gate.jpg" || got.ContentType != "image/jpeg" || !got.Image || !got.Thumbnail || got.Width != 1920 || got.Height != 1080 ||
			!got.CreatedAt.Equal(m.CreatedAt) {
			t.Errorf("attachment read back as %+v (%d bytes); want what was stored", got.AttachmentInfo, len(got.Data))
		}
		tn, err := f.s.AttachmentData(ctx, a.ID, true)
		if err != nil || !bytes.Equal(tn, thumb) {
			t.Fatalf("thumbnail = %q, %v; want %q", tn, err, thumb)
		}
		stored, err := f.s.Message(ctx, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		x, err := DecodeExtras(stored.Extras)
		if err != nil || x.Attachment == nil || x.Attachment.ID != a.ID {
			t.Errorf("extras %s name attachment %+v, %v; want %s", stored.Extras, x.Attachment, err, a.ID)
		}
		if n := f.count(t, "SELECT count(*) FROM events WHERE message_id = ?", m.ID); n != 1 {
			t.Errorf("%d stream events for the message, want 1", n)
		}
		if n, err := f.s.AttachmentBytes(ctx, f.owner.ID); err != nil || n != int64(len(data)) {
			t.Errorf("AttachmentBytes = %d, %v; want %d", n, err, len(data))
		}
		// Without a thumbnail, asking for one is not found.
		_, b, err := f.send(t, []byte("small"), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.AttachmentData(ctx, b.ID, true); !errors.Is(err, ErrNotFound) {
			t.Errorf("thumbnail of an attachment without one: %v, want ErrNotFound", err)
		}
		if _, err := f.s.Attachment(ctx, "att_nope"); !errors.Is(err, ErrNotFound) {
			t.Errorf("unknown attachment: %v, want ErrNotFound", err)
		}
	})
}

// TestAttachmentQuota: a file that would take its owner over the quota is
// refused with a QuotaError and nothing is stored, message included; many
// concurrent uploads never together pass it.
func TestAttachmentQuota(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		f := newAttachmentFixture(t, dsn, nil)
		if _, _, err := f.send(t, make([]byte, 600), nil, 1000); err != nil {
			t.Fatal(err)
		}
		_, _, err := f.send(t, make([]byte, 401), nil, 1000)
		var qe *QuotaError
		if !errors.As(err, &qe) || !errors.Is(err, ErrLimit) || qe.Have != 600 || qe.Size != 401 || qe.Max != 1000 {
			t.Fatalf("over the quota: %v, want a QuotaError{600, 401, 1000}", err)
		}
		if n := f.count(t, "SELECT count(*) FROM messages"); n != 1 {
			t.Errorf("%d messages after a refused upload, want 1", n)
		}
		// 20 uploads of 100 bytes at once, 400 bytes left: exactly 4 pass.
		var wg sync.WaitGroup
		var mu sync.Mutex
		passed := 0
		for range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _, err := f.send(t, make([]byte, 100), nil, 1000)
				if err != nil && !errors.Is(err, ErrLimit) {
					t.Error(err)
				}
				mu.Lock()
				defer mu.Unlock()
				if err == nil {
					passed++
				}
			}()
		}
		wg.Wait()
		if passed != 4 {
			t.Errorf("%d concurrent uploads passed, want 4", passed)
		}
		if n, err := f.s.AttachmentBytes(ctx, f.owner.ID); err != nil || n != 1000 {
			t.Errorf("bytes kept = %d, %v; want 1000", n, err)
		}
		if n := f.count(t, "SELECT count(*) FROM messages"); n != 5 {
			t.Errorf("%d messages, want 5 (each refused upload stores none)", n)
		}
	})
}

// TestAttachmentGoesWithItsMessage: deleting the message, its channel or
// the retention sweep deletes the attachment.
func TestAttachmentGoesWithItsMessage(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		var mu sync.Mutex
		clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		f := newAttachmentFixture(t, dsn, clock)
		gone := func(what string, a *Attachment) {
			t.Helper()
			if _, err := f.s.AttachmentData(ctx, a.ID, false); !errors.Is(err, ErrNotFound) {
				t.Errorf("after %s: attachment %v, want ErrNotFound", what, err)
			}
			if n := f.count(t, "SELECT count(*) FROM attachments WHERE id = ?", a.ID); n != 0 {
				t.Errorf("after %s: %d rows left", what, n)
			}
		}
		m, a, err := f.send(t, []byte("one"), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.s.DeleteMessage(ctx, f.owner.ID, m.ID); err != nil {
			t.Fatal(err)
		}
		gone("deleting the message", a)

		_, old, err := f.send(t, []byte("old"), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		now = now.Add(48 * time.Hour)
		mu.Unlock()
		_, kept, err := f.send(t, []byte("new"), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.DeleteMessagesBefore(ctx, now.Add(-24*time.Hour)); err != nil {
			t.Fatal(err)
		}
		gone("the retention sweep", old)
		if _, err := f.s.Attachment(ctx, kept.ID); err != nil {
			t.Errorf("a newer message's attachment after the sweep: %v", err)
		}
		if err := f.s.DeleteChannel(ctx, f.owner.ID, f.channel.ID); err != nil {
			t.Fatal(err)
		}
		gone("deleting the channel", kept)
	})
}

// TestAttachmentWithUrgentAlert: an urgent message that carries a file has
// its alert stored in the same write as both.
func TestAttachmentWithUrgentAlert(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		f := newAttachmentFixture(t, dsn, nil)
		a := &Attachment{AttachmentInfo: AttachmentInfo{ID: NewAttachmentID(), Name: "smoke.jpg", ContentType: "image/jpeg"},
			UserID: f.owner.ID, Data: []byte("jpeg")}
		m := &Message{ChannelID: f.channel.ID, Title: "Smoke", Priority: "urgent", Alert: &NewAlert{Repeat: time.Minute, Expire: time.Hour}}
		if err := f.s.CreateMessageWithAttachment(ctx, m, a, nil, 0); err != nil {
			t.Fatal(err)
		}
		al, err := f.s.Alert(ctx, m.ID)
		if err != nil || al.State == "" || al.Repeat != time.Minute {
			t.Fatalf("alert of an urgent message with a file: %+v, %v", al, err)
		}
		if _, err := f.s.Attachment(ctx, a.ID); err != nil {
			t.Fatal(err)
		}
	})
}
