package service

import (
	"net/http"
	"time"

	"github.com/heraldhq/herald/appstore"
	"github.com/heraldhq/herald/config"
)

// Subscriptions are the configured app stores; a nil field is a store that
// is not configured, whose endpoints answer 404.
type Subscriptions struct {
	Apple     *appstore.Apple
	ApplePro  []string // product ids that pay for the pro plan
	Play      *appstore.Play
	PubSub    *appstore.PubSub // nil: the Google webhook is off
	GooglePro []string
}

// NewSubscriptions builds the stores cfg configures: Apple when bundle_id is
// set, Google when package_name is. client makes the outbound calls (Play
// API, its token endpoint, Google's keys); it must have a timeout.
func NewSubscriptions(cfg config.Subscriptions, client *http.Client, now func() time.Time) (*Subscriptions, error) {
	subs := &Subscriptions{ApplePro: cfg.Apple.ProProductIDs, GooglePro: cfg.Google.ProProductIDs}
	if cfg.Apple.BundleID != "" {
		a, err := appstore.NewApple(cfg.Apple.BundleID, cfg.Apple.RootCAFile, now)
		if err != nil {
			return nil, err
		}
		subs.Apple = a
	}
	if g := cfg.Google; g.PackageName != "" {
		p, err := appstore.NewPlay(g.PackageName, g.CredentialsFile, g.Endpoint, client)
		if err != nil {
			return nil, err
		}
		subs.Play = p
		if g.PubsubAudience != "" {
			subs.PubSub = appstore.NewPubSub(g.PubsubAudience, g.PubsubEmail, g.PackageName, "", "", client)
		}
	}
	return subs, nil
}
