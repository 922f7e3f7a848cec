package service

import (
	"context"
	"strings"

	"github.com/heraldhq/herald/store"
)

// CreateFolder checks f's name and stores f as a new folder of owner
// (its name trimmed), placed last, unless owner already has as many
// folders as their plan allows.
func (s *Service) CreateFolder(ctx context.Context, owner *store.User, f *store.Folder) error {
	if err := checkName("name", f.Name); err != nil {
		return err
	}
	f.Name = strings.TrimSpace(f.Name)
	f.UserID = owner.ID
	max := s.Limits(owner.Plan).MaxFolders
	return overCap(s.st.CreateFolderCapped(ctx, f, max), owner.Plan, "folders", "delete one to create another")
}

// RenameFolder checks name and gives it, trimmed, to userID's folder id.
func (s *Service) RenameFolder(ctx context.Context, userID, id, name string) (*store.Folder, error) {
	if err := checkName("name", name); err != nil {
		return nil, err
	}
	return s.st.RenameFolder(ctx, userID, id, strings.TrimSpace(name))
}

// DeleteFolder deletes userID's folder id; its channels stay, in no folder.
func (s *Service) DeleteFolder(ctx context.Context, userID, id string) error {
	return s.st.DeleteFolder(ctx, userID, id)
}

// ReorderFolders puts userID's folders in the order of ids, which must
// name each of them exactly once (store.ErrInvalidOrder).
func (s *Service) ReorderFolders(ctx context.Context, userID string, ids []string) ([]store.Folder, error) {
	return s.st.ReorderFolders(ctx, userID, ids)
}
