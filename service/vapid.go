package service

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/heraldhq/herald/push"
)

// VAPIDKeys returns the server's Web Push key pair, generating it on first
// use and keeping it in the database: browsers subscribe to the public key,
// so it must survive restarts.
func (s *Service) VAPIDKeys(ctx context.Context) (public, private string, err error) {
	b, err := s.st.EnsureSetting(ctx, "vapid_keys", func() ([]byte, error) {
		priv, pub, err := push.GenerateVAPIDKeys()
		if err != nil {
			return nil, err
		}
		return json.Marshal([2]string{pub, priv})
	})
	if err != nil {
		return "", "", err
	}
	var keys [2]string
	if err := json.Unmarshal(b, &keys); err != nil {
		return "", "", fmt.Errorf("service: stored VAPID keys: %w", err)
	}
	return keys[0], keys[1], nil
}
