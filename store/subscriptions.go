package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Subscription states.
const (
	SubscriptionActive  = "active"
	SubscriptionExpired = "expired"
)

// ErrPurchaseTaken is returned when a purchase is already linked to another
// user: one purchase pays for one account.
var ErrPurchaseTaken = errors.New("store: purchase belongs to another user")

// Subscription is one app-store purchase and what the store last said of it.
type Subscription struct {
	Store      string // apple, google
	OriginalID string // originalTransactionId or purchase token
	UserID     string
	ProductID  string
	Status     string // active, expired
	ExpiresAt  *time.Time
	UpdatedAt  time.Time
}

// Active says whether s pays for pro at now.
func (s *Subscription) Active(now time.Time) bool {
	return s.Status == SubscriptionActive && (s.ExpiresAt == nil || s.ExpiresAt.After(now))
}

const subscriptionCols = "store, original_id, user_id, product_id, status, expires_at, updated_at"

func scanSubscription(row scanner) (*Subscription, error) {
	var sub Subscription
	var expires sql.NullInt64
	var updated int64
	if err := row.Scan(&sub.Store, &sub.OriginalID, &sub.UserID, &sub.ProductID, &sub.Status, &expires, &updated); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, ErrNotFound
		}
		return nil, err
	}
	sub.ExpiresAt, sub.UpdatedAt = nullTime(expires), fromMS(updated)
	return &sub, nil
}

// SaveSubscription records what a store says of a purchase and sets the
// owner's plan in the same transaction: proPlan while any of their
// subscriptions is active, else defaultPlan. A purchase already linked to
// another user is ErrPurchaseTaken (the row is unchanged). The status is
// stored as given, except that an end date already past makes it expired.
func (s *Store) SaveSubscription(ctx context.Context, sub *Subscription, proPlan, defaultPlan string) error {
	now := s.now()
	sub.UpdatedAt = now.UTC().Truncate(time.Millisecond)
	if sub.Status == SubscriptionActive && !sub.Active(now) {
		sub.Status = SubscriptionExpired
	}
	defer s.tokens.invalidate() // the send path caches plans
	err := s.update(ctx, func(tx *writeTx) error {
		var owner string
		err := tx.QueryRow("SELECT user_id FROM subscriptions WHERE store = ? AND original_id = ?",
			sub.Store, sub.OriginalID).Scan(&owner)
		switch {
		case err == nil && owner != sub.UserID:
			return ErrPurchaseTaken
		case err != nil && !errors.Is(err, sql.ErrNoRows):
			return err
		}
		if _, err := tx.Exec(`INSERT INTO subscriptions (`+subscriptionCols+`) VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (store, original_id) DO UPDATE SET product_id = excluded.product_id, status = excluded.status,
				expires_at = excluded.expires_at, updated_at = excluded.updated_at`,
			sub.Store, sub.OriginalID, sub.UserID, sub.ProductID, sub.Status, nullMS(sub.ExpiresAt), ms(sub.UpdatedAt)); err != nil {
			return err
		}
		return setPlanFromSubscriptions(tx, sub.UserID, now, proPlan, defaultPlan)
	})
	if err != nil {
		return fmt.Errorf("store: save subscription %s: %w", sub.Store, err)
	}
	return nil
}

// setPlanFromSubscriptions gives userID proPlan while one of their
// subscriptions is active at now, else defaultPlan.
func setPlanFromSubscriptions(tx *writeTx, userID string, now time.Time, proPlan, defaultPlan string) error {
	_, err := tx.Exec(`UPDATE users SET plan = CASE WHEN EXISTS (SELECT 1 FROM subscriptions
		WHERE user_id = ?1 AND status = 'active' AND (expires_at IS NULL OR expires_at > ?2)) THEN ?3 ELSE ?4 END
		WHERE id = ?1`, userID, ms(now), proPlan, defaultPlan)
	return err
}

// Subscription returns a purchase by its store id, whoever owns it.
func (s *Store) Subscription(ctx context.Context, storeName, originalID string) (*Subscription, error) {
	sub, err := scanSubscription(s.read.QueryRowContext(ctx, "SELECT "+subscriptionCols+
		" FROM subscriptions WHERE store = ? AND original_id = ?", storeName, originalID))
	if err != nil {
		return nil, fmt.Errorf("store: subscription %s: %w", storeName, err)
	}
	return sub, nil
}

// UserSubscription returns the subscription that best describes a user's
// plan: an active one first, then the one that ended last, then the one
// updated last. ErrNotFound when they never subscribed.
func (s *Store) UserSubscription(ctx context.Context, userID string) (*Subscription, error) {
	sub, err := scanSubscription(s.read.QueryRowContext(ctx, "SELECT "+subscriptionCols+` FROM subscriptions
		WHERE user_id = ?
		ORDER BY status = 'active' DESC, COALESCE(expires_at, 9223372036854775807) DESC, updated_at DESC LIMIT 1`, userID))
	if err != nil {
		return nil, fmt.Errorf("store: subscription of %s: %w", userID, err)
	}
	return sub, nil
}

// ExpireSubscriptions marks active subscriptions whose end date has passed
// as expired and recomputes their owners' plans. It returns how many ended.
func (s *Store) ExpireSubscriptions(ctx context.Context, proPlan, defaultPlan string) (int, error) {
	now := s.now()
	var n int
	err := s.update(ctx, func(tx *writeTx) error {
		n = 0
		rows, err := tx.Query(`UPDATE subscriptions SET status = 'expired', updated_at = ?1
			WHERE status = 'active' AND expires_at <= ?1 RETURNING user_id`, ms(now))
		if err != nil {
			return err
		}
		var users []string
		for rows.Next() {
			var u string
			if err := rows.Scan(&u); err != nil {
				rows.Close()
				return err
			}
			users = append(users, u)
		}
		if err := rows.Close(); err != nil {
			return err
		}
		if err := rows.Err(); err != nil {
			return err
		}
		n = len(users)
		for _, u := range users {
			if err := setPlanFromSubscriptions(tx, u, now, proPlan, defaultPlan); err != nil {
				return err
			}
		}
		return nil
	})
	if n > 0 {
		s.tokens.invalidate()
	}
	if err != nil {
		return 0, fmt.Errorf("store: expire subscriptions: %w", err)
	}
	return n, nil
}
