package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/store"
)

// TestDurabilityAfterSIGKILL checks the promise of POST /v1/send: a 200 means
// the message is committed. It sends from many goroutines, kills the server
// with SIGKILL while sends are in flight, restarts it on the same data
// directory and requires every acknowledged id to be there, through the API
// and through store.Open, on SQLite and on PostgreSQL.
func TestDurabilityAfterSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the herald binary")
	}
	forEachDatabase(t, testDurabilityAfterSIGKILL)
}

func testDurabilityAfterSIGKILL(t *testing.T, db procDB) {
	dataDir := t.TempDir()

	srv := durStart(t, dataDir, db.env()...)
	runHerald(t, srv.env, "", "user", "add", "durability@example.com")
	key := strings.TrimSpace(runHerald(t, srv.env, "", "key", "create", "durability@example.com", "--name", "durability"))
	var ch struct {
		ID           string `json:"id"`
		WebhookToken string `json:"webhook_token"`
	}
	if status, err := testkit.CallJSON(http.MethodPost, srv.base+"/v1/channels", map[string]string{"name": "Durability"}, &ch, key); err != nil || status != http.StatusCreated {
		t.Fatalf("create channel: status %d, %v; want 201", status, err)
	}

	acked := durSendUntilKilled(t, srv, srv.base+"/v1/send/"+ch.WebhookToken)
	if got, want := len(acked), 50; got < want {
		t.Fatalf("only %d sends were acknowledged before the kill; want at least %d for a meaningful test", got, want)
	}
	t.Logf("%d sends acknowledged before SIGKILL", len(acked))

	srv2 := durStart(t, dataDir, db.env()...)
	stored := durListIDs(t, srv2.base, key, ch.ID)
	var missing []string
	for _, id := range acked {
		if !stored[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("%d of %d acknowledged messages are missing after restart, e.g. %v", len(missing), len(acked), missing[:min(5, len(missing))])
	}
	t.Logf("all %d acknowledged messages found after restart (%d stored)", len(acked), len(stored))

	srv2.stop(t, 30*time.Second)
	durCheckStore(t, db.open(t, dataDir), acked)
}

// durStart runs herald serve on dataDir, with generous rate limits and
// extraEnv, and waits up to 20s for /healthz.
func durStart(t *testing.T, dataDir string, extraEnv ...string) *heraldProc {
	t.Helper()
	return startHerald(t, 20*time.Second, dataDir, append([]string{
		"HERALD_PLANS_FREE_SEND_PER_MINUTE=100000000",
		"HERALD_PLANS_FREE_API_PER_MINUTE=100000000",
		"HERALD_PLANS_PRO_SEND_PER_MINUTE=100000000", // herald user add makes pro users
		"HERALD_PLANS_PRO_API_PER_MINUTE=100000000",
		"HERALD_LOG_LEVEL=warn",
	}, extraEnv...)...)
}

// durSendUntilKilled sends from 16 goroutines; after 300 ms (longer if fewer
// than 50 sends were acknowledged by then, up to 15 s) it kills the server
// mid-flight. It returns the ids of every send answered 200. Any failure
// before the kill fails the test.
func durSendUntilKilled(t *testing.T, srv *heraldProc, url string) []string {
	t.Helper()
	const senders = 16
	client := &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: senders, MaxConnsPerHost: senders},
	}
	defer client.CloseIdleConnections()
	var (
		mu      sync.Mutex
		acked   []string
		count   atomic.Int64
		killed  atomic.Bool
		wg      sync.WaitGroup
		errOnce sync.Once
		early   error // set once, read after wg.Wait
		failed  atomic.Bool
	)
	for g := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !killed.Load(); i++ {
				id, err := durSend(client, url, g, i)
				if err != nil {
					if !killed.Load() {
						errOnce.Do(func() { early = err })
						failed.Store(true)
					}
					return
				}
				mu.Lock()
				acked = append(acked, id)
				mu.Unlock()
				count.Add(1)
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	for deadline := time.Now().Add(15 * time.Second); count.Load() < 50 && time.Now().Before(deadline) && !failed.Load(); {
		time.Sleep(20 * time.Millisecond)
	}
	killed.Store(true) // before the kill: errors from here on are expected
	srv.kill(t)
	wg.Wait()
	if early != nil {
		t.Fatalf("a send failed before the kill: %v\n%s", early, srv.log)
	}
	return acked
}

// durSend posts one message and returns its id if the answer was 200.
func durSend(client *http.Client, url string, g, i int) (string, error) {
	body := fmt.Sprintf(`{"title":"durability %d/%d","body":"sent before the crash","priority":"high"}`, g, i)
	resp, err := client.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	var out struct {
		OK bool   `json:"ok"`
		ID string `json:"id"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &out) != nil || !out.OK || out.ID == "" {
		return "", fmt.Errorf("send: status %d: %s", resp.StatusCode, b)
	}
	return out.ID, nil
}

// durListIDs pages through GET /v1/messages of the channel.
func durListIDs(t *testing.T, base, key, channelID string) map[string]bool {
	t.Helper()
	ids := map[string]bool{}
	for offset := 0; ; offset += 200 {
		var page struct {
			Messages []struct {
				ID string `json:"id"`
			} `json:"messages"`
			Total int `json:"total"`
		}
		u := fmt.Sprintf("%s/v1/messages?channel_id=%s&limit=200&offset=%d", base, channelID, offset)
		if status, err := testkit.CallJSON(http.MethodGet, u, nil, &page, key); err != nil || status != http.StatusOK {
			t.Fatalf("GET /v1/messages: status %d, %v; want 200", status, err)
		}
		for _, m := range page.Messages {
			ids[m.ID] = true
		}
		if len(page.Messages) == 0 || offset+200 >= page.Total {
			if got, want := len(ids), page.Total; got != want {
				t.Errorf("listed %d distinct messages, total says %d", got, want)
			}
			return ids
		}
	}
}

// durCheckStore looks every acknowledged id up in st, the database opened
// directly.
func durCheckStore(t *testing.T, st *store.Store, acked []string) {
	t.Helper()
	ctx := context.Background()
	for _, id := range acked {
		if _, err := st.Message(ctx, id); err != nil {
			t.Fatalf("store.Message(%s) of an acknowledged send: %v", id, err)
		}
	}
}
