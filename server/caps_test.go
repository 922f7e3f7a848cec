package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/internal/testkit"
)

// lowCaps makes the Free plan's caps small enough to reach in a test, and
// the Pro plan's a little larger.
func lowCaps(cfg *config.Config) {
	cfg.Plans.Free.MaxChannels, cfg.Plans.Free.MaxFolders, cfg.Plans.Free.MaxPins = 3, 2, 2
	cfg.Plans.Free.MaxDevices, cfg.Plans.Free.MaxStreams = 2, 2
	cfg.Plans.Pro.MaxChannels = 5
}

// wantCapRefusal checks a create refused for its cap: 400 invalid_payload
// whose message says how many the user has, of what, and the plan's limit.
func wantCapRefusal(t *testing.T, r response, want string) {
	t.Helper()
	wantError(t, r, http.StatusBadRequest, "invalid_payload")
	if msg := r.Str("message"); !strings.Contains(msg, want) {
		t.Fatalf("message %q does not say %q", msg, want)
	}
}

// Each cap: creates up to it work, the next is refused with a message that
// names the cap, and nothing more is stored; another user's count is their
// own.
func TestPlanCapsRefuseCreates(t *testing.T) {
	env := newTestEnv(t, lowCaps)
	u := env.newUser("ann@example.com")
	other := env.newUser("bob@example.com")

	var chans []string
	for i := range 3 {
		chans = append(chans, env.newChannel(u, fmt.Sprint("c", i))["id"].(string))
	}
	r := env.request("POST", "/v1/channels", map[string]string{"name": "over"}, u.Token)
	wantCapRefusal(t, r, "you have 3 channels, the limit of your plan (free) is 3")
	if n := chCount(env, u.Token); n != 3 {
		t.Fatalf("%d channels after the refusal, want 3", n)
	}
	env.newChannel(other, "theirs")

	for i := range 2 {
		env.do(201, "POST", "/v1/folders", map[string]string{"name": fmt.Sprint("f", i)}, u.Token)
	}
	r = env.request("POST", "/v1/folders", map[string]string{"name": "over"}, u.Token)
	wantCapRefusal(t, r, "you have 2 folders, the limit of your plan (free) is 2")
	if n := len(chItems(t, env.do(200, "GET", "/v1/folders", nil, u.Token), "folders")); n != 2 {
		t.Fatalf("%d folders after the refusal, want 2", n)
	}

	for _, id := range chans[:2] {
		env.do(201, "POST", "/v1/pins", map[string]string{"channel_id": id}, u.Token)
	}
	r = env.request("POST", "/v1/pins", map[string]string{"channel_id": chans[2]}, u.Token)
	wantCapRefusal(t, r, "you have 2 pins, the limit of your plan (free) is 2")
	// Pinning a pinned channel creates nothing: it answers at the cap.
	if p := env.do(200, "POST", "/v1/pins", map[string]string{"channel_id": chans[0]}, u.Token); p.Body["position"] != 0.0 {
		t.Fatalf("pinning again = %s, want the existing pin", p.Raw)
	}
	pins := chIDs(chItems(t, env.do(200, "GET", "/v1/pins", nil, u.Token), "pins"), "channel_id")
	if fmt.Sprint(pins) != fmt.Sprint(chans[:2]) {
		t.Fatalf("pins = %v, want %v", pins, chans[:2])
	}

	first := devRegister(env, u.Token, "ios", "token-1", "phone")
	devRegister(env, u.Token, "android", "token-2", "tablet")
	r = env.request("POST", "/v1/devices", map[string]string{"platform": "ios", "push_token": "token-3", "name": "third"}, u.Token)
	wantCapRefusal(t, r, "you have 2 devices, the limit of your plan (free) is 2")
	// An app registering its token again at every start still works.
	again := devRegister(env, u.Token, "ios", "token-1", "renamed phone")
	if again["id"] != first["id"] || again["name"] != "renamed phone" {
		t.Fatalf("registering a token again at the cap = %v, want device %v updated", again, first["id"])
	}
	if got := devList(env, u.Token); len(got) != 2 {
		t.Fatalf("devices = %v, want 2", got)
	}
	if stored, err := env.st.ListDevices(context.Background(), u.ID); err != nil || len(stored) != 2 {
		t.Fatalf("stored devices = %d, %v; want 2", len(stored), err)
	}

	// Freeing a place lets the next create in.
	env.do(200, "DELETE", "/v1/channels/"+chans[2], nil, u.Token)
	env.newChannel(u, "again")

	// The caps show in GET /v1/subscriptions.
	lim, _ := env.do(200, "GET", "/v1/subscriptions", nil, u.Token).Body["limits"].(map[string]any)
	want := map[string]float64{"max_channels": 3, "max_folders": 2, "max_pins": 2, "max_devices": 2, "max_streams": 2, "max_api_keys": 10}
	for k, v := range want {
		if lim[k] != v {
			t.Errorf("limits.%s = %v, want %v (limits %v)", k, lim[k], v, lim)
		}
	}
}

// A Pro user gets the Pro plan's caps, and a cap the configuration leaves
// at 0 is the plan's built-in one.
func TestPlanCapsFollowThePlan(t *testing.T) {
	env := newTestEnv(t, lowCaps)
	u := env.newUser("pro@example.com")
	if err := env.st.SetUserPlan(context.Background(), u.ID, config.PlanPro); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		env.newChannel(u, fmt.Sprint("c", i))
	}
	r := env.request("POST", "/v1/channels", map[string]string{"name": "over"}, u.Token)
	wantCapRefusal(t, r, "you have 5 channels, the limit of your plan (pro) is 5")
	lim, _ := env.do(200, "GET", "/v1/subscriptions", nil, u.Token).Body["limits"].(map[string]any)
	if lim["max_channels"] != 5.0 || lim["max_folders"] != 500.0 || lim["max_streams"] != 50.0 {
		t.Fatalf("pro limits = %v, want max_channels 5 and the built-in 500 folders, 50 streams", lim)
	}
}

// Creates that race for the last places over HTTP: exactly the cap is
// stored, and every other create is refused for the cap.
func TestPlanCapConcurrentChannels(t *testing.T) {
	env := newTestEnv(t, func(cfg *config.Config) { cfg.Plans.Free.MaxChannels = 10 })
	u := env.newUser("race@example.com")
	const n = 30
	statuses := chParallel(env, u.Token, n, func(i int) (string, string, string) {
		return "POST", "/v1/channels", fmt.Sprintf(`{"name":"c%d"}`, i)
	})
	created, refused := 0, 0
	for _, s := range statuses {
		switch s {
		case http.StatusCreated:
			created++
		case http.StatusBadRequest:
			refused++
		default:
			t.Fatalf("statuses %v: want only 201 and 400", statuses)
		}
	}
	stored, err := env.st.ListChannels(context.Background(), u.ID)
	if err != nil {
		t.Fatal(err)
	}
	if created != 10 || refused != n-10 || len(stored) != 10 {
		t.Fatalf("%d created, %d refused, %d stored; want 10, %d, 10", created, refused, len(stored), n-10)
	}
}

// The live streams a user may have open at once: the one over the cap is
// refused with 429 before it starts, a stream that ends frees its place,
// and another user's streams are their own.
func TestPlanCapStreams(t *testing.T) {
	env := newTestEnv(t, lowCaps)
	u := env.newUser("ann@example.com")
	other := env.newUser("bob@example.com")
	a := streamOpen(env, u.Token)
	streamOpen(env, u.Token)

	// A client with a timeout: a stream that started would never end.
	r := env.requestWith(&http.Client{Timeout: 10 * time.Second}, "GET", "/v1/stream", nil, u.Token)
	wantError(t, r, http.StatusTooManyRequests, "rate_limited")
	if msg := r.Str("message"); !strings.Contains(msg, "you have 2 live streams open, the limit of your plan (free) is 2") {
		t.Fatalf("message %q does not name the cap", msg)
	}
	if r.Header.Get("Retry-After") == "" {
		t.Fatal("429 without Retry-After")
	}
	streamOpen(env, other.Token)

	// A closed stream gives its place back once its handler has returned.
	a.close()
	testkit.Eventually(t, streamWait, func() error {
		if n := env.s.streamsOpen.count(u.ID); n != 1 {
			return fmt.Errorf("%d streams still counted after one closed, want 1", n)
		}
		return nil
	})
	streamOpen(env, u.Token)
}

// count is how many streams userID holds (for tests).
func (c *streamSlots) count(userID string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.open[userID]
}
