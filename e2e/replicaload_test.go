package e2e

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
)

// The load TestReplicasKillUnderLoad puts on the replicas.

// replicaLoad sends messages with a callback through the replicas in turn
// and answers them through the replicas in turn, from several goroutines.
type replicaLoad struct {
	procs          []*heraldProc
	victim         *heraldProc // failures through it are expected once killed
	key, hook      string
	callback       string
	killed, halt   atomic.Bool
	wg             sync.WaitGroup
	mu             sync.Mutex
	sent, answered []string // acknowledged sends and responses (message ids)
	viaVictim      int      // acknowledged sends through the victim
	bad            []string // failures that should not have happened
}

// start runs workers goroutines until stop, which the end of t calls too.
func (ld *replicaLoad) start(t *testing.T, workers int) {
	t.Cleanup(ld.stop)
	for g := range workers {
		ld.wg.Add(1)
		go func() {
			defer ld.wg.Done()
			for i := g; !ld.halt.Load(); i++ {
				ld.one(g, i)
			}
		}()
	}
}

// one sends message i through one replica and answers it through one:
// turn by turn, each pair of replicas (sender, responder) comes up.
func (ld *replicaLoad) one(g, i int) {
	n := len(ld.procs)
	via, other := ld.procs[i%n], ld.procs[(i/n)%n]
	code, out, err := via.call("POST", "/v1/send/"+ld.hook, map[string]any{"title": fmt.Sprint("load ", g, "/", i),
		"callback_url": ld.callback, "actions": []any{map[string]string{"type": "button", "label": "OK", "key": "ok"}}}, "")
	id, _ := out["id"].(string)
	if !ld.ok(via, "send", code, err) || id == "" {
		return
	}
	ld.mu.Lock()
	ld.sent = append(ld.sent, id)
	if via == ld.victim {
		ld.viaVictim++
	}
	ld.mu.Unlock()
	code, _, err = other.call("POST", "/v1/messages/"+id+"/respond", map[string]string{"action": "ok"}, ld.key)
	if !ld.ok(other, "respond to "+id, code, err) {
		return
	}
	ld.mu.Lock()
	ld.answered = append(ld.answered, id)
	ld.mu.Unlock()
}

// ok reports whether a request was answered 200, and notes a failure that
// is not the victim's death.
func (ld *replicaLoad) ok(p *heraldProc, what string, code int, err error) bool {
	if err == nil && code == http.StatusOK {
		return true
	}
	if p != ld.victim || !ld.killed.Load() {
		ld.mu.Lock()
		ld.bad = append(ld.bad, fmt.Sprintf("%s through %s: %d %v", what, p.base, code, err))
		ld.mu.Unlock()
	}
	return false
}

func (ld *replicaLoad) responded() int {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	return len(ld.answered)
}

// stop ends the load and waits for the requests in flight.
func (ld *replicaLoad) stop() {
	ld.halt.Store(true)
	ld.wg.Wait()
}
