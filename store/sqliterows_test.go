package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

// TestSQLiteRowsShareOneStatement: on SQLite, rows queued one after
// another go in statements of 2, 4, ... 64 rows, the largest that fit
// first, and a row left alone on its own; when a statement fails, each of
// its rows goes again on its own, with its own error. SQLite's changes()
// tells how many rows the last statement inserted.
func TestSQLiteRowsShareOneStatement(t *testing.T) {
	t.Parallel()
	f := newRowsFixture(t, filepath.Join(t.TempDir(), "herald.db"))
	ctx := context.Background()
	if err := f.s.DeleteChannel(ctx, f.user.ID, f.doomed.ID); err != nil {
		t.Fatal(err)
	}

	// batch runs sends to channels, in order, as the writer runs a batch,
	// and returns their errors and the rows the last statement inserted.
	batch := func(channels ...*Channel) ([]error, int) {
		t.Helper()
		return f.rowsBatch(t, channels, func(tx *writeTx) (func(*writeReq, *error) error, func() error) {
			b := &sqliteBatch{s: f.s, tx: tx}
			return b.run, b.flush
		}, func(tx *tx) int {
			var last int
			if err := tx.QueryRow("SELECT changes()").Scan(&last); err != nil {
				t.Fatal(err)
			}
			return last
		})
	}
	count := func() int { return f.count(t, f.kept) }
	many := func(n int) []*Channel {
		out := make([]*Channel, n)
		for i := range out {
			out[i] = f.kept
		}
		return out
	}

	stored := 0
	for _, c := range []struct{ rows, last int }{{4, 4}, {24, 8}, {64, 64}, {100, 4}, {3, 1}, {1, 1}} {
		errs, last := batch(many(c.rows)...)
		stored += c.rows
		if err := errors.Join(errs...); err != nil || last != c.last || count() != stored {
			t.Errorf("%d sends: %v, the last statement inserted %d, %d stored; want %d, %d stored", c.rows, err, last, count(), c.last, stored)
		}
	}
	errs, last := batch(f.kept, f.kept, f.kept, f.doomed, f.kept)
	stored += 4
	if errs[0] != nil || errs[1] != nil || errs[2] != nil || !isForeignKey(errs[3]) || errs[4] != nil || last != 1 || count() != stored {
		t.Errorf("5 sends, the fourth to a deleted channel: %v, the last statement inserted %d, %d stored; "+
			"want the fourth refused, each row of the failed statement of 4 and the fifth on its own, %d stored", errs, last, count(), stored)
	}
}
