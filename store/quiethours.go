package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

// Modes of quiet hours: what happens to a push that falls inside them.
const (
	// QuietHold keeps the push back until the quiet hours end.
	QuietHold = "hold"
	// QuietSilent pushes at once, shown without sound or alert.
	QuietSilent = "silent"
)

// QuietHours are a user's daily quiet time: from Start to End (times of
// day "HH:MM" in TimeZone, an IANA zone; End before Start crosses
// midnight), pushes to their devices wait (QuietHold) or arrive silently
// (QuietSilent). The service checks them; the store keeps them as JSON.
type QuietHours struct {
	Enabled  bool   `json:"enabled"`
	Start    string `json:"start"`
	End      string `json:"end"`
	TimeZone string `json:"time_zone"`
	Mode     string `json:"mode"`
}

// QuietHours returns the quiet hours user id set; the zero value when they
// never did. An unknown user is ErrNotFound.
func (s *Store) QuietHours(ctx context.Context, userID string) (QuietHours, error) {
	var doc sql.NullString
	err := s.read.QueryRowContext(ctx, "SELECT quiet_hours FROM users WHERE id = ?", userID).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		err = ErrNotFound
	}
	if err != nil {
		return QuietHours{}, fmt.Errorf("store: quiet hours %s: %w", userID, err)
	}
	var q QuietHours
	if doc.Valid {
		if err := json.Unmarshal([]byte(doc.String), &q); err != nil {
			return QuietHours{}, fmt.Errorf("store: quiet hours %s: %w", userID, err)
		}
	}
	return q, nil
}

// SetQuietHours replaces the quiet hours of user id.
func (s *Store) SetQuietHours(ctx context.Context, userID string, q QuietHours) error {
	doc, err := json.Marshal(q)
	if err != nil {
		return fmt.Errorf("store: set quiet hours: %w", err)
	}
	return s.updateOne(ctx, "set quiet hours", "UPDATE users SET quiet_hours = ? WHERE id = ?", string(doc), userID)
}

// quietOf reads the quiet hours a push target carries: nil unless set and
// enabled, so that the worker looks no further for most devices. A
// document that does not read is treated as none: the push goes out.
func quietOf(doc sql.NullString) *QuietHours {
	if !doc.Valid {
		return nil
	}
	var q QuietHours
	if json.Unmarshal([]byte(doc.String), &q) != nil || !q.Enabled {
		return nil
	}
	return &q
}
