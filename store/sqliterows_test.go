package store

import (
	"context"
	"errors"
	"fmt"
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
		sqlTx, err := f.s.write.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer sqlTx.Rollback()
		run, _, flush := f.s.sqliteRunner(&writeTx{tx: sqlTx, texts: f.s.st.texts})
		errs := make([]error, len(channels))
		for i, ch := range channels {
			now := f.s.now()
			args := []any{NewSortableID("msg_", now), ch.ID, fmt.Sprint(i), "", "normal", "[]", nil, false, nil, StatePending, ms(now), nil,
				nil, nil, nil, false, false}
			req := &writeReq{ctx: ctx, single: true, row: &rowWrite{ins: insertMessages, args: args},
				fn: func(tx *writeTx) error { _, err := tx.ExecStmt(f.s.st.insertMessage, args...); return err }}
			if err := run(req, &errs[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := flush(); err != nil {
			t.Fatal(err)
		}
		var last int
		if err := sqlTx.QueryRow("SELECT changes()").Scan(&last); err != nil {
			t.Fatal(err)
		}
		if err := sqlTx.Commit(); err != nil {
			t.Fatal(err)
		}
		return errs, last
	}
	count := func() int {
		t.Helper()
		var n int
		if err := f.s.read.QueryRow("SELECT COUNT(*) FROM messages WHERE channel_id = ?", f.kept.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
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
