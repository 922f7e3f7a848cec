package store

import "fmt"

// Page asks a list for one page: at most Limit rows (0: all of them) after
// the row After names (zero: from the first). Lists page by keyset, on the
// order they are listed in, so a page costs the same however deep it is
// and a row added or removed meanwhile moves no other row to another page.
type Page struct {
	Limit int
	After Cursor
}

// Cursor names a row by its place in its list's order: the sort key (a
// time in milliseconds or a position) and the id that breaks ties.
type Cursor struct {
	Key int64
	ID  string
}

// IsZero reports whether c names no row: the start of a list, or, as the
// next page's cursor, that there is none.
func (c Cursor) IsZero() bool { return c.ID == "" }

// clauses returns what a list query adds for p, ordered by the columns key
// and id: the condition that keeps the rows after p.After (to AND in) with
// its arguments, and the LIMIT, which asks for one row more than the page
// so that the list knows whether another page follows.
func (p Page) clauses(key, id string) (where string, args []any, limit string) {
	if !p.After.IsZero() {
		where = fmt.Sprintf(" AND (%s > ? OR (%s = ? AND %s > ?))", key, key, id)
		args = []any{p.After.Key, p.After.Key, p.After.ID}
	}
	if p.Limit > 0 {
		limit = fmt.Sprintf(" LIMIT %d", p.Limit+1)
	}
	return where, args, limit
}

// cut trims rows, read with p's clauses, to the page and returns the
// cursor of its last row when another page follows (else zero).
func cut[T any](rows []T, p Page, cursor func(*T) Cursor) ([]T, Cursor) {
	if p.Limit <= 0 || len(rows) <= p.Limit {
		return rows, Cursor{}
	}
	rows = rows[:p.Limit]
	return rows, cursor(&rows[len(rows)-1])
}
