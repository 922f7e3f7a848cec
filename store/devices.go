package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Device is a phone or browser that receives pushes for its user.
type Device struct {
	ID        string
	UserID    string
	Platform  string // ios, android, web
	Name      string
	PushToken string
	Active    bool // false once a provider said the token is dead
	// SessionID is the browser session that registered a web device (empty
	// otherwise, and once that session ends): only it may answer from the
	// device's notifications.
	SessionID string
	CreatedAt time.Time
	UpdatedAt time.Time
	// Quiet is the device's user's quiet hours when enabled, nil
	// otherwise; only PushTargets fills it in.
	Quiet *QuietHours
}

const deviceCols = "id, user_id, platform, name, push_token, active, created_at, updated_at, COALESCE(session_id, '')"

func scanDevice(row scanner, extra ...any) (*Device, error) {
	var d Device
	var created, updated int64
	dest := append([]any{&d.ID, &d.UserID, &d.Platform, &d.Name, &d.PushToken, &d.Active, &created, &updated, &d.SessionID}, extra...)
	if err := row.Scan(dest...); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, ErrNotFound
		}
		return nil, err
	}
	d.CreatedAt, d.UpdatedAt = fromMS(created), fromMS(updated)
	return &d, nil
}

// RegisterDevice stores d for d.UserID. Registering a push token the user
// already has updates that device instead of adding a second one, so an app
// that registers at every start does not get every push twice; a token
// registered by another user moves to this one. The registration records
// d.SessionID (the browser session registering a web device, or none).
// It registers whatever the user already has (see CreateChannel).
func (s *Store) RegisterDevice(ctx context.Context, d *Device) error {
	return s.RegisterDeviceCapped(ctx, d, 0)
}

// RegisterDeviceCapped is RegisterDevice for a user who may have at most
// max devices (max <= 0: any number): a new device over it is a
// *LimitError, while a token the user already has updates its device at
// any count.
func (s *Store) RegisterDeviceCapped(ctx context.Context, d *Device, max int) error {
	now := s.now().UTC().Truncate(time.Millisecond)
	err := s.update(ctx, func(tx *writeTx) error {
		existing, err := scanDevice(tx.QueryRow("SELECT "+deviceCols+" FROM devices WHERE user_id = ? AND push_token = ?", d.UserID, d.PushToken))
		switch {
		case err == nil:
			d.ID, d.CreatedAt = existing.ID, existing.CreatedAt
		case errors.Is(err, ErrNotFound):
			if err := underCap(tx, "devices", d.UserID, max); err != nil {
				return err
			}
			d.ID, d.CreatedAt = NewID("dev_"), now
		default:
			return err
		}
		d.UpdatedAt, d.Active = now, true
		// A push token belongs to one phone or browser: when another user
		// signs in on it, the previous user's registration goes, so their
		// notifications stop appearing there.
		if _, err := tx.Exec("DELETE FROM devices WHERE push_token = ? AND user_id != ?", d.PushToken, d.UserID); err != nil {
			return err
		}
		_, err = tx.Exec(`INSERT INTO devices (id, user_id, platform, name, push_token, active, created_at, updated_at, session_id)
			VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET platform = excluded.platform, name = excluded.name, active = 1,
				updated_at = excluded.updated_at, session_id = excluded.session_id`,
			d.ID, d.UserID, d.Platform, d.Name, d.PushToken, ms(d.CreatedAt), ms(d.UpdatedAt), nullString(d.SessionID))
		return err
	})
	if err != nil {
		return fmt.Errorf("store: register device: %w", err)
	}
	return nil
}

// DevicePatch holds the fields a device PATCH changes.
type DevicePatch struct {
	PushToken *string
	Name      *string
}

// UpdateDevice changes a user's device; a new push token reactivates it
// and moves to it from any device that had it, as RegisterDevice does.
func (s *Store) UpdateDevice(ctx context.Context, userID, id string, p DevicePatch) (*Device, error) {
	var d *Device
	err := s.update(ctx, func(tx *writeTx) error {
		var err error
		d, err = scanDevice(tx.QueryRow("SELECT "+deviceCols+" FROM devices WHERE id = ? AND user_id = ?", id, userID))
		if err != nil {
			return err
		}
		if p.PushToken != nil {
			d.PushToken, d.Active = *p.PushToken, true
		}
		if p.Name != nil {
			d.Name = *p.Name
		}
		d.UpdatedAt = s.now().UTC().Truncate(time.Millisecond)
		if p.PushToken != nil {
			// As at registration: a push token belongs to one device, so
			// any other registration of it (another user's too) goes.
			if _, err := tx.Exec("DELETE FROM devices WHERE push_token = ? AND id != ?", d.PushToken, d.ID); err != nil {
				return err
			}
		}
		_, err = tx.Exec("UPDATE devices SET push_token = ?, name = ?, active = ?, updated_at = ? WHERE id = ?",
			d.PushToken, d.Name, d.Active, ms(d.UpdatedAt), d.ID)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: update device %s: %w", id, err)
	}
	return d, nil
}

// Device returns a user's device.
func (s *Store) Device(ctx context.Context, userID, id string) (*Device, error) {
	d, err := scanDevice(s.read.QueryRowContext(ctx, "SELECT "+deviceCols+" FROM devices WHERE id = ? AND user_id = ?", id, userID))
	if err != nil {
		return nil, fmt.Errorf("store: device %s: %w", id, err)
	}
	return d, nil
}

// ListDevices returns a user's devices, oldest first.
func (s *Store) ListDevices(ctx context.Context, userID string) ([]Device, error) {
	out, _, err := s.ListDevicesPage(ctx, userID, Page{})
	return out, err
}

// ListDevicesPage returns a page of a user's devices, oldest first, and the
// cursor of the next page (zero on the last).
func (s *Store) ListDevicesPage(ctx context.Context, userID string, p Page) ([]Device, Cursor, error) {
	where, args, limit := p.clauses("created_at", "id")
	rows, err := s.read.QueryContext(ctx, "SELECT "+deviceCols+" FROM devices WHERE user_id = ?"+where+
		" ORDER BY created_at, id"+limit, append([]any{userID}, args...)...)
	if err != nil {
		return nil, Cursor{}, fmt.Errorf("store: list devices: %w", err)
	}
	defer rows.Close()
	out := []Device{}
	for rows.Next() {
		d, err := scanDevice(rows)
		if err != nil {
			return nil, Cursor{}, fmt.Errorf("store: list devices: %w", err)
		}
		out = append(out, *d)
	}
	if err := rows.Err(); err != nil {
		return nil, Cursor{}, fmt.Errorf("store: list devices: %w", err)
	}
	out, next := cut(out, p, func(d *Device) Cursor { return Cursor{Key: ms(d.CreatedAt), ID: d.ID} })
	return out, next, nil
}

// DeleteDevice removes a user's device.
func (s *Store) DeleteDevice(ctx context.Context, userID, id string) error {
	return s.updateOne(ctx, "delete device", "DELETE FROM devices WHERE id = ? AND user_id = ?", id, userID)
}

// nullString stores "" as NULL, for optional references.
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}
