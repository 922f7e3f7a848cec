package service

import (
	"context"
	"errors"
	"strings"

	"github.com/heraldhq/herald/store"
)

// APIKeyPrefix starts every API key.
const APIKeyPrefix = "pk_live_"

// MaxActiveKeys is how many unrevoked API keys a user may have.
const MaxActiveKeys = 10

// maxKeyName is the length limit of a key's name, in characters.
const maxKeyName = 100

// NewAPIKey returns a fresh key: APIKeyPrefix and 32 base62 characters.
func NewAPIKey() string { return APIKeyPrefix + store.NewToken(32) }

// CreateAPIKey makes and stores a key named name for userID and returns
// the key itself, which is never shown again: only its hash is stored.
func (s *Service) CreateAPIKey(ctx context.Context, userID, name string) (*store.APIKey, string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return nil, "", invalid("name is required")
	}
	if chars(name) > maxKeyName {
		return nil, "", invalid("name is longer than %d characters", maxKeyName)
	}
	key := NewAPIKey()
	k := &store.APIKey{UserID: userID, Name: name, Prefix: key[:12]}
	if err := s.st.CreateAPIKey(ctx, k, store.HashToken(key), MaxActiveKeys); err != nil {
		if errors.Is(err, store.ErrLimit) {
			return nil, "", invalid("a user can have at most %d active API keys; revoke one first", MaxActiveKeys)
		}
		return nil, "", err
	}
	return k, key, nil
}

// RevokeAPIKey revokes userID's unrevoked key keyID; it stops working at
// once. A key that is not userID's, or is already revoked, is
// ErrNotFound: one user never learns of another's keys.
func (s *Service) RevokeAPIKey(ctx context.Context, userID, keyID string) error {
	return s.st.RevokeAPIKey(ctx, userID, keyID)
}
