package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/testkit"
)

// The replica tests run two herald serve on one PostgreSQL database, each
// with its own port and data directory, as a deployment behind a load
// balancer would, and spread the requests over both. They need
// HERALD_TEST_DATABASE_URL (internal/pgtest) and are skipped with -short.

// TestReplicasKillUnderLoad: senders and responders go through both
// replicas alternately; one replica is killed with SIGKILL mid-load. Every
// send either replica acknowledged is in the database; every callback an
// acknowledged response queued reaches its receiver, signed, at least once;
// a stream open on the survivor saw every acknowledged message, those sent
// through the dead replica too.
func TestReplicasKillUnderLoad(t *testing.T) {
	db := replicaDB(t)
	procs := startReplicas(t, db, 2, crashEnv(db.leaseEnv()...)...)
	victim, survivor := procs[0], procs[1]
	key := replicaUser(t, survivor, "load@example.com", "pro")
	ch := replicaNewChannel(t, procs, key, "load")
	// Held a little, so that callbacks queue up and some are in the
	// victim's hands when it dies.
	rc := replicaNewReceiver(t, ch.secret, "response.received", 50*time.Millisecond)
	stream := openStream(t, survivor, key)

	ld := &replicaLoad{procs: procs, victim: victim, key: key, hook: ch.hook, callback: rc.URL + "/herald"}
	ld.start(t, 6)
	// A few seconds of load on both, then on the survivor alone.
	began := time.Now()
	testkit.WaitFor(t, "2 s of load and 30 acknowledged responses", 60*time.Second, func() bool {
		return time.Since(began) >= 2*time.Second && ld.responded() >= 30
	})
	ld.killed.Store(true) // first: failures through the victim are expected from here on
	victim.kill(t)
	before, killedAt, calledBack := ld.responded(), time.Now(), rc.total()
	testkit.WaitFor(t, "2 s more and 20 more acknowledged responses after the kill", 60*time.Second, func() bool {
		return time.Since(killedAt) >= 2*time.Second && ld.responded() >= before+20
	})
	ld.stop()
	if len(ld.bad) > 0 {
		t.Fatalf("%d requests failed where they should not have, e.g. %s", len(ld.bad), ld.bad[0])
	}
	t.Logf("%d sends acknowledged (%d through the killed replica), %d responses (%d before the kill)",
		len(ld.sent), ld.viaVictim, len(ld.answered), before)

	// Every acknowledged send is in the database.
	ctx := context.Background()
	st := db.open(t, "")
	for _, id := range ld.sent {
		if _, err := st.Message(ctx, id); err != nil {
			t.Fatalf("store.Message(%s) of an acknowledged send: %v", id, err)
		}
	}
	// The survivor's stream saw each of them.
	stream.waitCreated(t, ld.sent, 60*time.Second)

	// Every callback arrives; the victim's claims come back after their
	// lease. Once the queue is empty nothing more will arrive: count.
	rc.waitAll(t, ld.answered, 60*time.Second+db.leaseWait())
	testkit.WaitFor(t, "an empty callback queue", 60*time.Second+db.leaseWait(), func() bool {
		n, err := st.PendingDeliveries(ctx)
		return err == nil && n == 0
	})
	rc.checkSigned(t)
	twice, more := 0, 0
	for id, n := range rc.times(ld.answered) {
		switch {
		case n == 2:
			twice++
		case n > 2:
			more++
			t.Logf("message %s: %d callbacks", id, n)
		}
		_, m, err := survivor.call("GET", "/v1/messages/"+id, nil, key)
		if d, _ := m["delivery"].(map[string]any); err != nil || d["state"] != "delivered" {
			t.Errorf("message %s: delivery %v (%v), want delivered", id, m["delivery"], err)
		}
	}
	t.Logf("%d callbacks, %d delivered twice, %d more than twice; %d of the deliveries came after the kill, from the survivor",
		len(ld.answered), twice, more, rc.total()-calledBack)
}

// TestReplicasReadOnce: an answered message polled through both replicas
// at once, by several pollers, hands its response to exactly one; the
// others read already_read.
func TestReplicasReadOnce(t *testing.T) {
	db := replicaDB(t)
	procs := startReplicas(t, db, 2, crashEnv()...)
	key := replicaUser(t, procs[0], "poll@example.com", "pro")
	ch := replicaNewChannel(t, procs, key, "poll")
	const messages, pollers = 20, 6
	for i := range messages {
		id, _ := procs[i%2].must(t, http.StatusOK, "POST", "/v1/send/"+ch.hook, map[string]any{"title": fmt.Sprint("poll ", i),
			"actions": []any{map[string]string{"type": "button", "label": "OK", "key": "ok"}}}, "")["id"].(string)
		procs[(i+1)%2].must(t, http.StatusOK, "POST", "/v1/messages/"+id+"/respond", map[string]string{"action": "ok"}, key)

		statuses := make(chan string, pollers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for j := range pollers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				code, out, err := procs[j%2].call("GET", "/v1/callback/"+ch.hook+"/"+id, nil, "")
				if err != nil || code != http.StatusOK {
					statuses <- fmt.Sprintf("%d %v", code, err)
					return
				}
				statuses <- fmt.Sprint(out["status"])
			}()
		}
		close(start)
		wg.Wait()
		close(statuses)
		got := map[string]int{}
		for s := range statuses {
			got[s]++
		}
		if got["submitted"] != 1 || got["already_read"] != pollers-1 {
			t.Fatalf("message %s polled %d times at once through both replicas: %v, want 1 submitted and %d already_read",
				id, pollers, got, pollers-1)
		}
	}
}

// TestReplicasApprovalResolvesOnce: the three approvers of a 2-of-3 rule
// vote at the same moment through both replicas: one vote waits, one
// resolves, one is too late; the approval resolves once, with one callback.
func TestReplicasApprovalResolvesOnce(t *testing.T) {
	db := replicaDB(t)
	procs := startReplicas(t, db, 2, crashEnv()...)
	owner := replicaUser(t, procs[0], "owner@example.com", "pro")
	ch := replicaNewChannel(t, procs, owner, "approvals")
	emails := []string{"bob@example.com", "cat@example.com", "dan@example.com"}
	voters := make([]string, len(emails))
	for i, e := range emails {
		voters[i] = replicaUser(t, procs[i%2], e, "pro")
	}
	procs[1].must(t, http.StatusOK, "PATCH", "/v1/channels/"+ch.id, map[string]any{"approval": map[string]any{
		"required_count": 2, "approvers": emails, "window_seconds": 3600}}, owner)
	rc := replicaNewReceiver(t, ch.secret, "approval.resolved", 0)

	const messages = 10
	ids := make([]string, messages)
	for i := range ids {
		ids[i], _ = procs[i%2].must(t, http.StatusOK, "POST", "/v1/send/"+ch.hook, map[string]any{"title": fmt.Sprint("deploy ", i),
			"callback_url": rc.URL + "/herald"}, "")["id"].(string)
		if got, want := replicaVote(t, procs, ids[i], voters), "1 approved, 1 pending, 1 too late"; got != want {
			t.Errorf("votes on %s: %s, want %s", ids[i], got, want)
		}
	}

	rc.waitAll(t, ids, 60*time.Second)
	for i, id := range ids {
		_, a := replicaApproval(t, procs[i%2], id, owner)
		if a["status"] != "approved" || aprNum(a["approvals_received"]) != 2 {
			t.Errorf("message %s: approval %v, want approved with 2", id, a)
		}
		// One job, delivered once: no second callback can be on its way.
		log := procs[(i+1)%2].must(t, http.StatusOK, "GET", "/v1/messages/"+id+"/deliveries", nil, owner)
		if d, _ := log["delivery"].(map[string]any); d["state"] != "delivered" || len(log["deliveries"].([]any)) != 1 {
			t.Errorf("message %s: delivery log %v, want one delivered attempt", id, log)
		}
	}
	for id, n := range rc.times(ids) {
		if n != 1 {
			t.Errorf("message %s: %d approval.resolved callbacks, want 1", id, n)
		}
	}
}

// replicaVote has every voter approve message id at the same moment,
// through the replicas in turn, and tallies the answers.
func replicaVote(t *testing.T, procs []*heraldProc, id string, voters []string) string {
	t.Helper()
	answers := make(chan string, len(voters))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for j, key := range voters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			code, out, err := procs[j%len(procs)].call("POST", "/v1/messages/"+id+"/respond", map[string]string{"action": "approve"}, key)
			switch {
			case err == nil && code == http.StatusOK:
				answers <- fmt.Sprint(out["approval_status"])
			case err == nil && code == http.StatusConflict:
				answers <- "too late"
			default:
				answers <- fmt.Sprintf("%d %v %v", code, out, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	close(answers)
	got := map[string]int{}
	for a := range answers {
		got[a]++
	}
	var parts []string
	for _, a := range []string{"approved", "pending", "too late"} {
		parts = append(parts, fmt.Sprint(got[a], " ", a))
		delete(got, a)
	}
	for a, n := range got {
		parts = append(parts, fmt.Sprint(n, " ", a))
	}
	return strings.Join(parts, ", ")
}

// replicaApproval reads message id and its approval object through p.
func replicaApproval(t *testing.T, p *heraldProc, id, key string) (msg, approval map[string]any) {
	t.Helper()
	msg = p.must(t, http.StatusOK, "GET", "/v1/messages/"+id, nil, key)
	approval, _ = msg["approval"].(map[string]any)
	return msg, approval
}

// aprNum reads a JSON number as an int (-1 when it is not one).
func aprNum(v any) int {
	n, ok := v.(float64)
	if !ok {
		return -1
	}
	return int(n)
}

// TestReplicasDeletedChannelToken: a channel deleted through one replica
// stops answering to its webhook token on the other within the token
// cache's bound, a second: every request that starts later is 401. A poll
// (GET /v1/callback) is served from the cache until then; a send fails to
// store its message at once and is 401 from the first.
func TestReplicasDeletedChannelToken(t *testing.T) {
	db := replicaDB(t)
	procs := startReplicas(t, db, 2, crashEnv()...)
	a, b := procs[0], procs[1]
	key := replicaUser(t, a, "delete@example.com", "pro")

	polled := replicaNewChannel(t, procs, key, "polled")
	id, _ := a.must(t, http.StatusOK, "POST", "/v1/send/"+polled.hook, map[string]string{"title": "answered?"}, "")["id"].(string)
	poll := "/v1/callback/" + polled.hook + "/" + id
	b.must(t, http.StatusOK, "GET", poll, nil, "") // B has the token in its cache now
	a.must(t, http.StatusOK, "DELETE", "/v1/channels/"+polled.id, nil, key)
	took, before := untilRefused(t, time.Now(), func() (int, map[string]any, error) { return b.call("GET", poll, nil, "") })
	t.Logf("B answered 401 to a poll that began %s after the delete through A; before it: %v", took.Round(time.Millisecond), before)

	sent := replicaNewChannel(t, procs, key, "sent")
	send := map[string]string{"title": "still here?"}
	b.must(t, http.StatusOK, "POST", "/v1/send/"+sent.hook, send, "") // cached on B
	a.must(t, http.StatusOK, "DELETE", "/v1/channels/"+sent.id, nil, key)
	took, before = untilRefused(t, time.Now(), func() (int, map[string]any, error) { return b.call("POST", "/v1/send/"+sent.hook, send, "") })
	t.Logf("B answered 401 to a send that began %s after the delete through A; before it: %v", took.Round(time.Millisecond), before)
}

// untilRefused calls do until it answers 401, and returns how long after
// deleted the call that did began, and the answers before it (how many of
// each). Any call that
// begins more than a second after deleted must be 401.
func untilRefused(t *testing.T, deleted time.Time, do func() (int, map[string]any, error)) (time.Duration, map[string]int) {
	t.Helper()
	const bound = time.Second // the token cache's (store/tokencache.go)
	before := map[string]int{}
	for {
		began := time.Now()
		code, out, err := do()
		if err == nil && code == http.StatusUnauthorized && out["error"] == "invalid_token" {
			return began.Sub(deleted), before
		}
		if began.Sub(deleted) > bound {
			t.Fatalf("a request through B that began %s after the channel was deleted through A: %d %v %v, want 401 invalid_token",
				began.Sub(deleted).Round(time.Millisecond), code, out, err)
		}
		before[fmt.Sprintf("%d %v", code, out["error"])]++
		time.Sleep(10 * time.Millisecond)
	}
}

// TestReplicasShareRateLimit: the Free plan's 5 sends a minute per channel
// hold for the channel, not for each replica: 10 sends alternating over two
// replicas are 5 × 200 and 5 × 429.
func TestReplicasShareRateLimit(t *testing.T) {
	db := replicaDB(t)
	procs := startReplicas(t, db, 2, "HERALD_LOG_LEVEL=warn")
	key := replicaUser(t, procs[0], "free@example.com", "free")
	ch := replicaNewChannel(t, procs, key, "limited")
	const sends, perMinute = 10, 5
	got := map[int]int{}
	began := time.Now()
	for i := range sends {
		code, out, err := procs[i%2].call("POST", "/v1/send/"+ch.hook, map[string]string{"title": fmt.Sprint("limited ", i)}, "")
		if err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
		if code != http.StatusOK && code != http.StatusTooManyRequests {
			t.Fatalf("send %d: %d %v, want 200 or 429", i, code, out)
		}
		got[code]++
	}
	// The bucket refills one send every 12 s: on a machine so slow that the
	// sends took longer, the late ones may have earned a refill.
	took := time.Since(began)
	refilled := int(took / (time.Minute / perMinute))
	if n := got[http.StatusOK]; n < perMinute || n > perMinute+refilled {
		t.Fatalf("%d sends alternating over two replicas in %s: %d × 200 and %d × 429, want %d × 200 and %d × 429 (plus up to %d refilled)",
			sends, took.Round(time.Millisecond), n, got[http.StatusTooManyRequests], perMinute, sends-perMinute, refilled)
	}
}
