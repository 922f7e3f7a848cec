package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ErrInvalidOrder is returned by a reorder that does not name each of the
// user's items exactly once.
var ErrInvalidOrder = errors.New("store: reorder must list every item exactly once")

// Folder groups channels in the apps.
type Folder struct {
	ID        string
	UserID    string
	Name      string
	Position  int
	CreatedAt time.Time
}

// CreateFolder appends a folder at the end of the user's list, whatever
// the user already has (see CreateChannel).
func (s *Store) CreateFolder(ctx context.Context, f *Folder) error {
	return s.CreateFolderCapped(ctx, f, 0)
}

// CreateFolderCapped is CreateFolder for a user who may have at most max
// folders (max <= 0: any number); with max or more it is a *LimitError.
func (s *Store) CreateFolderCapped(ctx context.Context, f *Folder, max int) error {
	f.ID = NewID("fld_")
	f.CreatedAt = s.now().UTC().Truncate(time.Millisecond)
	err := s.update(ctx, func(tx *writeTx) error {
		if err := underCap(tx, "folders", f.UserID, max); err != nil {
			return err
		}
		if err := tx.QueryRow("SELECT COALESCE(MAX(position), -1) + 1 FROM folders WHERE user_id = ?", f.UserID).Scan(&f.Position); err != nil {
			return err
		}
		_, err := tx.Exec("INSERT INTO folders (id, user_id, name, position, created_at) VALUES (?, ?, ?, ?, ?)",
			f.ID, f.UserID, f.Name, f.Position, ms(f.CreatedAt))
		return err
	})
	if err != nil {
		return fmt.Errorf("store: create folder: %w", err)
	}
	return nil
}

// ListFolders returns a user's folders in their order.
func (s *Store) ListFolders(ctx context.Context, userID string) ([]Folder, error) {
	out, _, err := listFolders(s.readQuery(ctx), userID, Page{})
	return out, err
}

// ListFoldersPage returns a page of a user's folders in their order, and
// the cursor of the next page (zero on the last).
func (s *Store) ListFoldersPage(ctx context.Context, userID string, p Page) ([]Folder, Cursor, error) {
	return listFolders(s.readQuery(ctx), userID, p)
}

// queryFunc runs a query: tx.Query inside a write, s.readQuery(ctx) on the
// reader pool.
type queryFunc func(q string, args ...any) (*sql.Rows, error)

// readQuery queries the reader pool under ctx.
func (s *Store) readQuery(ctx context.Context) queryFunc {
	return func(q string, args ...any) (*sql.Rows, error) { return s.read.QueryContext(ctx, q, args...) }
}

func listFolders(query queryFunc, userID string, p Page) ([]Folder, Cursor, error) {
	where, args, limit := p.clauses("position", "id")
	rows, err := query("SELECT id, user_id, name, position, created_at FROM folders WHERE user_id = ?"+where+
		" ORDER BY position, id"+limit, append([]any{userID}, args...)...)
	if err != nil {
		return nil, Cursor{}, fmt.Errorf("store: list folders: %w", err)
	}
	defer rows.Close()
	out := []Folder{}
	for rows.Next() {
		var f Folder
		var created int64
		if err := rows.Scan(&f.ID, &f.UserID, &f.Name, &f.Position, &created); err != nil {
			return nil, Cursor{}, fmt.Errorf("store: list folders: %w", err)
		}
		f.CreatedAt = fromMS(created)
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, Cursor{}, fmt.Errorf("store: list folders: %w", err)
	}
	out, next := cut(out, p, func(f *Folder) Cursor { return Cursor{Key: int64(f.Position), ID: f.ID} })
	return out, next, nil
}

// RenameFolder renames a user's folder and returns it.
func (s *Store) RenameFolder(ctx context.Context, userID, id, name string) (*Folder, error) {
	var f Folder
	err := s.update(ctx, func(tx *writeTx) error {
		var created int64
		err := tx.QueryRow(`UPDATE folders SET name = ? WHERE id = ? AND user_id = ?
			RETURNING id, user_id, name, position, created_at`, name, id, userID).
			Scan(&f.ID, &f.UserID, &f.Name, &f.Position, &created)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		f.CreatedAt = fromMS(created)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: rename folder %s: %w", id, err)
	}
	return &f, nil
}

// DeleteFolder deletes a user's folder; its channels leave it (folder_id NULL).
func (s *Store) DeleteFolder(ctx context.Context, userID, id string) error {
	return s.updateOne(ctx, "delete folder", "DELETE FROM folders WHERE id = ? AND user_id = ?", id, userID)
}

// ReorderFolders sets the order of a user's folders. ids must name every one
// of them exactly once, or it is ErrInvalidOrder and nothing changes.
func (s *Store) ReorderFolders(ctx context.Context, userID string, ids []string) ([]Folder, error) {
	var out []Folder
	err := s.update(ctx, func(tx *writeTx) error {
		if err := reorder(tx, "SELECT id FROM folders WHERE user_id = ?",
			"UPDATE folders SET position = ? WHERE id = ? AND user_id = ?", userID, ids); err != nil {
			return err
		}
		var err error
		out, _, err = listFolders(tx.Query, userID, Page{})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: reorder folders: %w", err)
	}
	return out, nil
}

// reorder checks that ids is a permutation of what list returns for userID
// and writes each id's index through set(position, id, userID).
func reorder(tx *writeTx, list, set, userID string, ids []string) error {
	rows, err := tx.Query(list, userID)
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		have[id] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if len(ids) != len(have) {
		return ErrInvalidOrder
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if !have[id] || seen[id] {
			return ErrInvalidOrder
		}
		seen[id] = true
	}
	for i, id := range ids {
		if _, err := tx.Exec(set, i, id, userID); err != nil {
			return err
		}
	}
	return nil
}
