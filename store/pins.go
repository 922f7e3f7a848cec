package store

import (
	"context"
	"database/sql"
	"fmt"
)

// Pin is a channel pinned to the top of a user's list.
type Pin struct {
	ChannelID string
	Position  int
}

// ListPins returns a user's pins in their order.
func (s *Store) ListPins(ctx context.Context, userID string) ([]Pin, error) {
	out, _, err := listPins(s.readQuery(ctx), userID, Page{})
	return out, err
}

// ListPinsPage returns a page of a user's pins in their order, and the
// cursor of the next page (zero on the last).
func (s *Store) ListPinsPage(ctx context.Context, userID string, p Page) ([]Pin, Cursor, error) {
	return listPins(s.readQuery(ctx), userID, p)
}

func listPins(query queryFunc, userID string, pg Page) ([]Pin, Cursor, error) {
	where, args, limit := pg.clauses("position", "channel_id")
	rows, err := query("SELECT channel_id, position FROM pins WHERE user_id = ?"+where+
		" ORDER BY position, channel_id"+limit, append([]any{userID}, args...)...)
	if err != nil {
		return nil, Cursor{}, fmt.Errorf("store: list pins: %w", err)
	}
	defer rows.Close()
	out := []Pin{}
	for rows.Next() {
		var p Pin
		if err := rows.Scan(&p.ChannelID, &p.Position); err != nil {
			return nil, Cursor{}, fmt.Errorf("store: list pins: %w", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, Cursor{}, fmt.Errorf("store: list pins: %w", err)
	}
	out, next := cut(out, pg, func(p *Pin) Cursor { return Cursor{Key: int64(p.Position), ID: p.ChannelID} })
	return out, next, nil
}

// PinChannel pins a channel the user owns at the end of their pins. Pinning
// an already pinned channel changes nothing and returns the existing pin
// (created false). A channel that is not the user's is ErrNotFound. It
// pins whatever the user already has (see CreateChannel).
func (s *Store) PinChannel(ctx context.Context, userID, channelID string) (p Pin, created bool, err error) {
	return s.PinChannelCapped(ctx, userID, channelID, 0)
}

// PinChannelCapped is PinChannel for a user who may have at most max pins
// (max <= 0: any number): a new pin over it is a *LimitError, while the
// existing pin of a channel already pinned is returned at any count.
func (s *Store) PinChannelCapped(ctx context.Context, userID, channelID string, max int) (p Pin, created bool, err error) {
	p.ChannelID = channelID
	err = s.update(ctx, func(tx *writeTx) error {
		var n int
		if err := tx.QueryRow("SELECT count(*) FROM channels WHERE id = ? AND user_id = ?", channelID, userID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return ErrNotFound
		}
		err := tx.QueryRow("SELECT position FROM pins WHERE user_id = ? AND channel_id = ?", userID, channelID).Scan(&p.Position)
		if err == nil {
			return nil
		}
		if err != sql.ErrNoRows {
			return err
		}
		if err := underCap(tx, "pins", userID, max); err != nil {
			return err
		}
		if err := tx.QueryRow("SELECT COALESCE(MAX(position), -1) + 1 FROM pins WHERE user_id = ?", userID).Scan(&p.Position); err != nil {
			return err
		}
		created = true
		_, err = tx.Exec("INSERT INTO pins (user_id, channel_id, position) VALUES (?, ?, ?)", userID, channelID, p.Position)
		return err
	})
	if err != nil {
		return Pin{}, false, fmt.Errorf("store: pin %s: %w", channelID, err)
	}
	return p, created, nil
}

// UnpinChannel removes a pin; a channel that is not pinned is ErrNotFound.
func (s *Store) UnpinChannel(ctx context.Context, userID, channelID string) error {
	return s.updateOne(ctx, "unpin", "DELETE FROM pins WHERE user_id = ? AND channel_id = ?", userID, channelID)
}

// ReorderPins sets the order of a user's pins; channelIDs must name every
// pinned channel exactly once, or it is ErrInvalidOrder and nothing changes.
func (s *Store) ReorderPins(ctx context.Context, userID string, channelIDs []string) ([]Pin, error) {
	var out []Pin
	err := s.update(ctx, func(tx *writeTx) error {
		if err := reorder(tx, "SELECT channel_id FROM pins WHERE user_id = ?",
			"UPDATE pins SET position = ? WHERE channel_id = ? AND user_id = ?", userID, channelIDs); err != nil {
			return err
		}
		var err error
		out, _, err = listPins(tx.Query, userID, Page{})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: reorder pins: %w", err)
	}
	return out, nil
}
