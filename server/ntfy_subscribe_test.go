package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/ntfy"
)

// ntfyFixture is ann with a channel, subscribing with her email and
// password.
type ntfyFixture struct {
	env         *testEnv
	ann         *testUser
	chID, token string
	auth        string
}

func ntfySetup(t *testing.T) *ntfyFixture {
	t.Helper()
	env := newTestEnv(t)
	f := &ntfyFixture{env: env, ann: env.newUser("ann@example.com")}
	f.chID, f.token = streamChannel(env, f.ann, "ops")
	f.auth = ntfyBasic(f.ann.Email, f.ann.Password)
	return f
}

// TestNtfySubscribeJSON: a JSON stream opens with an open event naming the
// topics, then each message as ntfy's message object, its button as an
// http action whose tap answers it; the answer streams the update (same
// sequence, a new id, no button), and a deletion message_delete.
func TestNtfySubscribeJSON(t *testing.T) {
	t.Parallel()
	f := ntfySetup(t)
	c := ntfyOpen(f.env, "/"+f.token+"/json", f.auth)
	open := c.next()
	if open.str("event") != ntfy.EventOpen || open.str("topic") != f.token || open.str("id") == "" {
		t.Fatalf("first line %v, want the open event of topic %s", open, f.token)
	}
	id := streamSend(f.env, f.token, "Deploy?")
	l := c.next()
	wantLine(t, l, ntfy.EventMessage, id)
	if l.str("topic") != f.token || l.str("title") != "Deploy?" || l.str("message") != "**Deploy?**" || l["priority"] != 3.0 {
		t.Fatalf("message line %v, want topic, title, body and priority 3", l)
	}
	if _, ok := parseNtfyEventID(l.str("id")); !ok || len(l.str("id")) != 12 {
		t.Fatalf("id %q is not an event's ntfy id", l.str("id"))
	}
	acts := l.actions()
	if len(acts) != 1 || acts[0]["action"] != "http" || acts[0]["method"] != "POST" || acts[0]["label"] != "Ack" ||
		!strings.HasPrefix(acts[0]["url"].(string), f.env.srv.URL+ntfyAnswerPath) {
		t.Fatalf("actions %v, want one http POST to the answer path", acts)
	}

	// The tap, as the ntfy app makes it: POST, no credential, no body.
	tap := f.env.request("POST", strings.TrimPrefix(acts[0]["url"].(string), f.env.srv.URL), nil, "")
	if tap.Status != 200 || tap.Str("status") != "submitted" {
		t.Fatalf("tap: %d %s, want 200 submitted", tap.Status, tap.Raw)
	}
	up := c.next()
	wantLine(t, up, ntfy.EventMessage, id)
	if up.str("id") == l.str("id") || len(up.actions()) != 0 {
		t.Fatalf("update %v, want a new id and no actions", up)
	}
	poll := f.env.do(200, "GET", "/v1/callback/"+f.token+"/"+id, nil, "")
	if res, _ := poll.Body["result"].(map[string]any); poll.Str("status") != "submitted" || res["triggered_by"] != "ack" {
		t.Fatalf("the sender polls %s, want the ack answer", poll.Raw)
	}
	// A second tap meets the first answer, as in the web app.
	wantError(t, f.env.request("POST", strings.TrimPrefix(acts[0]["url"].(string), f.env.srv.URL), nil, ""),
		409, "already_responded")

	f.env.do(200, "DELETE", "/v1/messages/"+id, nil, f.ann.Token)
	// The poll's read streamed an update too (already_read).
	l = c.next()
	for l.str("event") == ntfy.EventMessage && len(l.actions()) == 0 {
		l = c.next()
	}
	wantLine(t, l, ntfy.EventMessageDelete, id)
}

// TestNtfySubscribeFormats: sse and raw carry the same lines as ntfy
// writes them.
func TestNtfySubscribeFormats(t *testing.T) {
	t.Parallel()
	f := ntfySetup(t)
	streamSend(f.env, f.token, "one\ntwo")
	for format, want := range map[string]string{
		"sse": "data: {\"id\":\"ev",
		"raw": "**one two**\n",
	} {
		status, h, body := ntfyGet(f.env, "/"+f.token+"/"+format+"?poll=1", f.auth)
		if status != 200 || !strings.HasSuffix(h.Get("Content-Type"), "charset=utf-8") {
			t.Fatalf("%s: %d %s", format, status, h.Get("Content-Type"))
		}
		if !strings.HasPrefix(string(body), want) || !strings.HasSuffix(string(body), "\n") {
			t.Errorf("%s poll %q, want %q", format, body, want)
		}
	}
}

// TestNtfyAuth: reading takes the user's credential, in each form ntfy
// clients send it; a topic the user may not read is 404, as if it did not
// exist.
func TestNtfyAuth(t *testing.T) {
	t.Parallel()
	f := ntfySetup(t)
	env := f.env
	key := env.apiKey(f.ann)
	bob := env.newUser("bob@example.com")
	_, bobToken := streamChannel(env, bob, "bob's")
	raw := base64.RawURLEncoding.EncodeToString([]byte(f.auth))
	for _, c := range []struct {
		name, path, auth string
		status           int
	}{
		{"no credential", "/" + f.token + "/auth", "", 401},
		{"wrong password", "/" + f.token + "/auth", ntfyBasic(f.ann.Email, "wrong password"), 401},
		{"password", "/" + f.token + "/auth", f.auth, 200},
		{"key as password, no user", "/" + f.token + "/auth", ntfyBasic("", key), 200},
		{"key as password, any user", "/" + f.token + "/auth", ntfyBasic("someone", key), 200},
		{"bearer key", "/" + f.token + "/auth", "Bearer " + key, 200},
		{"bearer session", "/" + f.token + "/auth", "Bearer " + f.ann.Token, 200},
		{"revoked-looking key", "/" + f.token + "/auth", "Bearer pk_live_nope", 401},
		{"auth query", "/" + f.token + "/auth?auth=" + raw, "", 200},
		{"bad auth query", "/" + f.token + "/auth?auth=%25%25", "", 401},
		{"another's topic", "/" + bobToken + "/auth", f.auth, 404},
		{"no such topic", "/nosuchtopic123/auth", f.auth, 404},
		{"one of two unreadable", "/" + f.token + "," + bobToken + "/auth", f.auth, 404},
		{"stream of another's topic", "/" + bobToken + "/json?poll=1", f.auth, 404},
		{"stream without credential", "/" + f.token + "/json?poll=1", "", 401},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, h, body := ntfyGet(env, c.path, c.auth)
			if status != c.status {
				t.Fatalf("status %d (%s), want %d", status, body, c.status)
			}
			var e ntfy.Error
			switch {
			case status == 200 && strings.HasSuffix(c.path, "/auth"):
				if strings.TrimSpace(string(body)) != `{"success":true}` {
					t.Fatalf("body %s, want success", body)
				}
			case status != 200:
				if err := json.Unmarshal(body, &e); err != nil || e.HTTP != status || e.Code != status*100+1 || e.Error == "" {
					t.Fatalf("error %s, want ntfy's shape with code %d01", body, status)
				}
			}
			if status == 401 && h.Get("WWW-Authenticate") != ntfyRealm {
				t.Fatalf("WWW-Authenticate %q, want %q", h.Get("WWW-Authenticate"), ntfyRealm)
			}
		})
	}
}

// TestNtfyPasswordThrottled: wrong passwords over ntfy count against the
// same budget as the local sign-in.
func TestNtfyPasswordThrottled(t *testing.T) {
	t.Parallel()
	f := ntfySetup(t)
	for i := range pairBudget.burst {
		if status, _, _ := ntfyGet(f.env, "/"+f.token+"/auth", ntfyBasic(f.ann.Email, "wrong "+strconv.Itoa(i))); status != 401 {
			t.Fatalf("attempt %d: status %d, want 401", i, status)
		}
	}
	status, h, _ := ntfyGet(f.env, "/"+f.token+"/auth", f.auth)
	if status != 429 || h.Get("Retry-After") == "" {
		t.Fatalf("after %d failures: status %d, want 429 with Retry-After", pairBudget.burst, status)
	}
	if r := f.env.request("POST", "/v1/auth/local", map[string]string{"email": f.ann.Email, "password": f.ann.Password}, ""); r.Status != 429 {
		t.Fatalf("the local sign-in after ntfy's failures: %d, want 429 (one budget)", r.Status)
	}
}

// TestNtfySince: since= picks where in the history a subscription
// starts, and a resume with the last id a client saw continues exactly.
func TestNtfySince(t *testing.T) {
	t.Parallel()
	f := ntfySetup(t)
	env := f.env
	ids := []string{streamSend(env, f.token, "m1"), streamSend(env, f.token, "m2"), streamSend(env, f.token, "m3")}
	all := ntfyPoll(env, "/"+f.token+"/json?poll=1", f.auth)
	if len(all) != 3 {
		t.Fatalf("poll: %d lines, want 3", len(all))
	}
	for i, l := range all {
		wantLine(t, l, ntfy.EventMessage, ids[i])
	}
	seqs := func(lines []ntfyLine) string {
		var s []string
		for _, l := range lines {
			s = append(s, l.str("sequence_id"))
		}
		return strings.Join(s, ",")
	}
	for _, c := range []struct{ since, want string }{
		{"all", strings.Join(ids, ",")},
		{all[0].str("id"), ids[1] + "," + ids[2]},
		{all[2].str("id"), ""},
		{ids[0], ids[1] + "," + ids[2]},
		{"latest", ids[2]},
		{"none", ""},
		{"1h", strings.Join(ids, ",")},
		{strconv.FormatInt(env.clock.Now().Add(-time.Minute).Unix(), 10), strings.Join(ids, ",")},
		{strconv.FormatInt(env.clock.Now().Add(time.Hour).Unix(), 10), ""},
		{"ev9999999999", strings.Join(ids, ",")}, // unknown: what is kept
		// Past the year 9999 (time.Unix overflowed into the past) and
		// before 1970.
		{"9223372036854775807", ""},
		{"9223372036854776", ""},
		{"-9223372036854775808", strings.Join(ids, ",")},
	} {
		if got := seqs(ntfyPoll(env, "/"+f.token+"/json?poll=1&since="+c.since, f.auth)); got != c.want {
			t.Errorf("since=%s: %s, want %s", c.since, got, c.want)
		}
	}
	if status, _, _ := ntfyGet(env, "/"+f.token+"/json?poll=1&since=yesterday", f.auth); status != 400 {
		t.Errorf("since=yesterday: status %d, want 400", status)
	}

	// A stream resumed after the second line gets the third, then the
	// live ones, each once.
	c := ntfyOpen(env, "/"+f.token+"/json?since="+all[1].str("id"), f.auth)
	if c.next().str("event") != ntfy.EventOpen {
		t.Fatal("no open event")
	}
	wantLine(t, c.next(), ntfy.EventMessage, ids[2])
	id4 := streamSend(env, f.token, "m4")
	wantLine(t, c.next(), ntfy.EventMessage, id4)

	// A poll after an answer has each message once, as it is now.
	env.do(200, "POST", "/v1/messages/"+ids[0]+"/respond", map[string]any{"action": "ack"}, f.ann.Token)
	got := ntfyPoll(env, "/"+f.token+"/json?poll=1&since=all", f.auth)
	if seqs(got) != ids[1]+","+ids[2]+","+id4+","+ids[0] || len(got[3].actions()) != 0 || len(got[0].actions()) != 1 {
		t.Fatalf("poll after an answer: %v", got)
	}
}

// TestNtfyFilters: ntfy's filters keep the message lines that match.
func TestNtfyFilters(t *testing.T) {
	t.Parallel()
	f := ntfySetup(t)
	env := f.env
	low := env.do(200, "POST", "/v1/send/"+f.token, map[string]any{"title": "low one", "body": "b", "priority": "low"}, "").Str("id")
	high := env.do(200, "POST", "/v1/send/"+f.token, map[string]any{"title": "high one", "body": "c", "priority": "high"}, "").Str("id")
	db := env.rawDB(t)
	defer db.Close()
	if _, err := db.Exec(`UPDATE messages SET extras = $1 WHERE id = $2`, `{"tags":["disk","warning"],"click_url":"https://example.com/c",`+
		`"icon_url":"https://example.com/i.png","attach_url":"https://example.com/files/graph.png","markdown":true,"ntfy_priority":5}`, high); err != nil {
		t.Fatal(err)
	}
	lines := ntfyPoll(env, "/"+f.token+"/json?poll=1", f.auth)
	h := lines[1]
	att, _ := h["attachment"].(map[string]any)
	if h["priority"] != 5.0 || h.str("click") != "https://example.com/c" || h.str("icon") != "https://example.com/i.png" ||
		att["url"] != "https://example.com/files/graph.png" || att["name"] != "graph.png" || h.str("content_type") != "text/markdown" {
		t.Fatalf("line with extras %v", h)
	}
	for q, want := range map[string]string{
		"priority=5":           high,
		"priority=low,min":     low,
		"p=high":               "",
		"tags=disk":            high,
		"tags=disk,nope":       "",
		"title=low%20one":      low,
		"message=c":            high,
		"id=" + h.str("id"):    high,
		"priority=3,2":         low,
		"x-unknown-filter=yes": low + "," + high,
	} {
		var got []string
		for _, l := range ntfyPoll(env, "/"+f.token+"/json?poll=1&"+q, f.auth) {
			got = append(got, l.str("sequence_id"))
		}
		if strings.Join(got, ",") != want {
			t.Errorf("%s: %v, want %s", q, got, want)
		}
	}
	if status, _, _ := ntfyGet(env, "/"+f.token+"/json?poll=1&priority=7", f.auth); status != 400 {
		t.Errorf("priority=7: %d, want 400", status)
	}
	// A filter in a header, as ntfy reads them.
	status, _, body := ntfyGet(env, "/"+f.token+"/json?poll=1", f.auth, "X-Priority", "2")
	if status != 200 || strings.Count(string(body), "\n") != 1 || !strings.Contains(string(body), low) {
		t.Errorf("X-Priority: 2: %s", body)
	}
}

// TestNtfyKeepalive: an idle stream gets keepalive events, and one whose
// key is revoked ends.
func TestNtfyKeepalive(t *testing.T) {
	t.Parallel()
	f := ntfySetup(t)
	f.env.s.heartbeat.Store(int64(20 * time.Millisecond))
	key := f.env.do(201, "POST", "/v1/keys", map[string]string{"name": "phone"}, f.ann.Token)
	c := ntfyOpen(f.env, "/"+f.token+"/json", ntfyBasic("", key.Str("key")))
	if c.next().str("event") != ntfy.EventOpen {
		t.Fatal("no open event")
	}
	select {
	case l := <-c.lines:
		if l.str("event") != ntfy.EventKeepalive || l.str("topic") != f.token {
			t.Fatalf("idle stream wrote %v, want a keepalive", l)
		}
	case <-time.After(streamWait):
		t.Fatal("no keepalive")
	}
	f.env.do(200, "DELETE", "/v1/keys/"+key.Str("id"), nil, f.ann.Token)
	c.ended()
}

// TestNtfyPasswordChangeEndsStream: a stream opened with a password ends
// once the password changes.
func TestNtfyPasswordChangeEndsStream(t *testing.T) {
	t.Parallel()
	f := ntfySetup(t)
	f.env.s.heartbeat.Store(int64(20 * time.Millisecond))
	c := ntfyOpen(f.env, "/"+f.token+"/json", f.auth)
	c.next()
	if err := f.env.st.SetUserPassword(context.Background(), f.ann.ID, "$argon2id$changed", ""); err != nil {
		t.Fatal(err)
	}
	c.ended()
}

// TestNtfyStreamCap: ntfy streams count against the plan's max_streams.
func TestNtfyStreamCap(t *testing.T) {
	t.Parallel()
	f := ntfySetup(t)
	f.env.s.cfg.Plans.Free.MaxStreams = 1
	ntfyOpen(f.env, "/"+f.token+"/json", f.auth).next()
	status, h, _ := ntfyGet(f.env, "/"+f.token+"/json", f.auth)
	if status != http.StatusTooManyRequests || h.Get("Retry-After") == "" {
		t.Fatalf("second stream: %d, want 429 with Retry-After", status)
	}
}
