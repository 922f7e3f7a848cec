package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestReplicasStreamResumes: a stream that read up to an event on one
// replica resumes on another with Last-Event-ID, and gets exactly what was
// committed meanwhile (through either replica), in order, with no reset.
func TestReplicasStreamResumes(t *testing.T) {
	db := replicaDB(t)
	procs := startReplicas(t, db, 2, "HERALD_LOG_LEVEL=warn")
	a, b := procs[0], procs[1]
	key := replicaUser(t, a, "ops@example.com", "pro")
	ch := replicaNewChannel(t, procs, key, "resume")
	send := func(p *heraldProc, title string) string {
		t.Helper()
		out := p.must(t, http.StatusOK, "POST", "/v1/send/"+ch.hook, map[string]string{"title": title}, "")
		id, _ := out["id"].(string)
		return id
	}

	// A stream on A sees a message sent through B; its event id is where
	// the client stands when it goes away.
	first := sseOpen(t, a, key, "")
	m1 := send(b, "one")
	lastID, _ := first.until(t, "message.created", m1)
	first.close()

	// Meanwhile two more, one through each replica.
	m2, m3 := send(a, "two"), send(b, "three")

	// The client comes back on B.
	second := sseOpen(t, b, key, lastID)
	_, events := second.until(t, "message.created", m3)
	second.close()
	var created []string
	for _, e := range events {
		switch e.event {
		case "stream.reset":
			t.Errorf("resuming from %s on the other replica: a reset (%s)", lastID, e.data)
		case "message.created":
			created = append(created, e.message)
		}
	}
	if strings.Join(created, ",") != m2+","+m3 {
		t.Errorf("resumed on the other replica from %s: message.created for %v, want exactly %s then %s", lastID, created, m2, m3)
	}
}

// sseStream reads one GET /v1/stream.
type sseStream struct {
	sc     *bufio.Scanner
	cancel context.CancelFunc
	body   interface{ Close() error }
}

type sseEvent struct{ id, event, data, message string }

func sseOpen(t *testing.T, p *heraldProc, key, lastEventID string) *sseStream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	req, err := http.NewRequestWithContext(ctx, "GET", p.base+"/v1/stream", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != http.StatusOK {
		cancel()
		t.Fatalf("GET /v1/stream: %v %v", res, err)
	}
	s := &sseStream{sc: bufio.NewScanner(res.Body), cancel: cancel, body: res.Body}
	t.Cleanup(s.close)
	return s
}

func (s *sseStream) close() { s.cancel(); s.body.Close() }

// until reads events until one of kind about message; it returns that
// event's id and every event read.
func (s *sseStream) until(t *testing.T, kind, message string) (string, []sseEvent) {
	t.Helper()
	var all []sseEvent
	var e sseEvent
	for s.sc.Scan() {
		line := s.sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			e.id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			e.event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			e.data = strings.TrimPrefix(line, "data: ")
			var m struct {
				ID string `json:"id"`
			}
			if json.Unmarshal([]byte(e.data), &m) == nil {
				e.message = m.ID
			}
		case line == "" && e.event != "":
			all = append(all, e)
			if e.event == kind && e.message == message {
				return e.id, all
			}
			e = sseEvent{}
		}
	}
	t.Fatalf("the stream ended (%v) before %s of %s; read %v", s.sc.Err(), kind, message, all)
	return "", nil
}
