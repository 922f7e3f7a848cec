package store

import "fmt"

// LimitError is ErrLimit with its numbers: the user already has Have of
// something they may have at most Max of. errors.Is(err, ErrLimit) holds.
type LimitError struct {
	Have, Max int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("store: limit reached: %d of at most %d", e.Have, e.Max)
}

// Is makes a *LimitError match ErrLimit.
func (e *LimitError) Is(target error) bool { return target == ErrLimit }

// underCap fails with a *LimitError when the user already has max or more
// rows in table; max <= 0 is no cap. It must run in the write transaction
// that then inserts: one write transaction runs at a time (the single
// writer, and on PostgreSQL the writer lock every replica takes first), so
// the count cannot change between the check and the insert, and two
// creates cannot both take the last free place. A count over a user's
// indexed rows, at most a few hundred of them, costs less than keeping one.
func underCap(tx *writeTx, table, userID string, max int) error {
	if max <= 0 {
		return nil
	}
	var n int
	if err := tx.QueryRow("SELECT count(*) FROM "+table+" WHERE user_id = ?", userID).Scan(&n); err != nil {
		return err
	}
	if n >= max {
		return &LimitError{Have: n, Max: max}
	}
	return nil
}
