package server

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/store"
)

// Approvers by consent: naming someone in a rule tells the owner nothing
// about their account, and prompts them for nothing until they accept; a
// named approver still votes by a message's id.

// acceptInvitations accepts every invitation addressed to u that is still
// open, as u, and returns how many there were.
func (e *testEnv) acceptInvitations(u *testUser) int {
	e.t.Helper()
	n := 0
	for _, in := range e.invitations(u) {
		if in["state"] == "invited" {
			e.do(200, "POST", "/v1/approvals/invitations/"+in["id"].(string)+"/accept", nil, u.Token)
			n++
		}
	}
	return n
}

// invitations lists u's invitations over HTTP.
func (e *testEnv) invitations(u *testUser) []map[string]any {
	e.t.Helper()
	var out []map[string]any
	for _, in := range e.do(200, "GET", "/v1/approvals/invitations", nil, u.Token).Body["invitations"].([]any) {
		out = append(out, in.(map[string]any))
	}
	return out
}

// approverRule is a PATCH body setting an approval rule.
func approverRule(required int, entries ...string) map[string]any {
	return map[string]any{"approval": map[string]any{"required_count": required, "approvers": entries, "window_seconds": 3600}}
}

// answerText is a response's status and body with each of entries
// replaced by ENTRY, for comparing answers that differ only by them.
func answerText(r response, entries ...string) string {
	s := string(r.Raw)
	for _, e := range entries {
		s = strings.ReplaceAll(s, e, "ENTRY")
	}
	return fmt.Sprintf("%d %s", r.Status, strings.TrimSpace(s))
}

// TestApproverEntriesTellNothing: a rule naming an existing account's
// email, an address nobody has, an existing user id or an id nobody has
// gets the same answer, to the byte but for the entry echoed; so do the
// approvers' list and the refusals of a rule that breaks a bound.
func TestApproverEntriesTellNothing(t *testing.T) {
	e := newTestEnv(t)
	ann, bob := e.newUser("ann@example.com"), e.newUser("bob@example.com")
	path := "/v1/channels/" + e.newChannel(ann, "deploys")["id"].(string)
	entries := map[string]string{
		"an account's email": "bob@example.com",
		"nobody's email":     "nobody@example.com",
		"an account's id":    bob.ID,
		"nobody's id":        store.NewID("usr_"),
	}
	answers := map[string][]string{}
	for name, entry := range entries {
		twice := entry
		if strings.Contains(entry, "@") {
			twice = strings.ToUpper(entry) // the same address
		}
		answers[name] = []string{
			answerText(e.request("PATCH", path, approverRule(1, entry), ann.Token), entry),
			answerText(e.request("GET", path+"/approvers", nil, ann.Token), entry),
			answerText(e.request("PATCH", path, approverRule(1, entry, twice), ann.Token), entry, twice),
			answerText(e.request("PATCH", path, approverRule(2, entry), ann.Token), entry),
		}
	}
	want := answers["nobody's id"]
	for name, got := range answers {
		if !slices.Equal(got, want) {
			t.Errorf("naming %s answers\n%q\nnaming nobody's id answers\n%q", name, got, want)
		}
	}
	if !strings.HasPrefix(want[0], "200 ") || want[1] != `200 {"approvers":[{"entry":"ENTRY","state":"invited"}]}` ||
		!strings.HasPrefix(want[2], "400 ") || !strings.HasPrefix(want[3], "400 ") {
		t.Fatalf("answers %q: want 200, the invited entry, 400, 400", want)
	}
	for _, refusal := range want[2:] {
		if !strings.Contains(refusal, `"error":"invalid_payload"`) || !strings.Contains(refusal, "approval.") {
			t.Errorf("refusal %s does not name the field", refusal)
		}
	}

	// The rule keeps each entry as typed: an address lower-cased, an id as
	// it is; nothing turns one into the other.
	r := e.do(200, "PATCH", path, approverRule(2, "Bob@Example.COM", bob.ID), ann.Token)
	aprSameJSON(t, "approvers", r.Body["approval"].(map[string]any)["approvers"], `["bob@example.com", "`+bob.ID+`"]`)
	aprSameJSON(t, "GET approvers", e.do(200, "GET", path+"/approvers", nil, ann.Token).Body["approvers"],
		`[{"entry": "bob@example.com", "state": "invited"}, {"entry": "`+bob.ID+`", "state": "invited"}]`)
	// The list is the owner's alone, even for whom it names.
	wantError(t, e.request("GET", path+"/approvers", nil, bob.Token), 404, "not_found")
}

// consentFixture is Ann's approval channel naming Bob by email, Bob with a
// phone and a live stream, and a channel of Bob's own for markers.
type consentFixture struct {
	*aprFixture
	bobDevice string
	bobStream *sseClient
	bobToken  string // his own channel's webhook token
}

func consentSetup(t *testing.T) *consentFixture {
	t.Helper()
	f := &consentFixture{aprFixture: aprSetup(t)}
	f.env.do(200, "PATCH", "/v1/channels/"+f.chID, approverRule(1, "bob@example.com"), f.a.Token)
	f.bobDevice = devRegister(f.env, f.b.Token, "ios", "b0b0c2d4e5b6978812345678901234567890abcdefabcdefabcdefabcdef0123", "Bob's phone")["id"].(string)
	_, f.bobToken = streamChannel(f.env, f.b, "bob's own")
	f.bobStream = streamOpen(f.env, f.b.Token)
	t.Cleanup(f.bobStream.close)
	f.bobStream.waitComment("connected")
	return f
}

// prompted reports whether message id reached Bob: a push to his phone
// (the push worker's targets), an event on his stream (checked against a
// marker sent after it), and a place in his list of approvals.
func (f *consentFixture) prompted(t *testing.T, id string) (pushed, streamed, listed bool) {
	t.Helper()
	devices, err := f.env.st.PushTargets(context.Background(), id, "", store.PushMessage)
	if err != nil {
		t.Fatal(err)
	}
	pushed = slices.ContainsFunc(devices, func(d store.Device) bool { return d.ID == f.bobDevice })
	marker := streamSend(f.env, f.bobToken, "marker "+id)
	for {
		data := f.bobStream.next(streamWait).JSON(t)
		if data["id"] == marker {
			break
		}
		streamed = streamed || data["id"] == id
	}
	for _, m := range f.env.do(200, "GET", "/v1/messages?approver=me", nil, f.b.Token).Body["messages"].([]any) {
		listed = listed || m.(map[string]any)["id"] == id
	}
	return pushed, streamed, listed
}

// TestApproverPromptedOnlyAfterAccepting: an approver named by email gets
// no push, no stream event and no list entry until they accept; then the
// channel's messages reach them (the earlier ones are listed), and after a
// decline nothing does, nor may they vote.
func TestApproverPromptedOnlyAfterAccepting(t *testing.T) {
	f := consentSetup(t)
	before := f.send()
	if pushed, streamed, listed := f.prompted(t, before); pushed || streamed || listed {
		t.Fatalf("before accepting: pushed %v, streamed %v, listed %v; want nothing", pushed, streamed, listed)
	}
	r := f.env.do(200, "GET", "/v1/channels/"+f.chID+"/approvers", nil, f.a.Token)
	aprSameJSON(t, "approvers before accepting", r.Body["approvers"], `[{"entry": "bob@example.com", "state": "invited"}]`)

	// Bob sees the invitation: the channel and who asks.
	invs := f.env.invitations(f.b)
	if len(invs) != 1 || invs[0]["channel_name"] != "prod deploys" || invs[0]["state"] != "invited" ||
		invs[0]["entry"] != "bob@example.com" {
		t.Fatalf("bob's invitations %v", invs)
	}
	aprSameJSON(t, "inviting owner", invs[0]["owner"], `{"name": "ann", "email": "ann@example.com"}`)
	if got := f.env.invitations(f.c); len(got) != 0 {
		t.Fatalf("cat sees invitations %v", got)
	}
	// Nobody else can answer it.
	inv := "/v1/approvals/invitations/" + invs[0]["id"].(string)
	wantError(t, f.env.request("POST", inv+"/accept", nil, f.c.Token), 404, "not_found")
	wantError(t, f.env.request("POST", inv+"/accept", nil, f.a.Token), 404, "not_found")

	accepted := f.env.do(200, "POST", inv+"/accept", nil, f.b.Token)
	if accepted.Str("state") != "accepted" {
		t.Fatalf("accept: %s", accepted.Raw)
	}
	r = f.env.do(200, "GET", "/v1/channels/"+f.chID+"/approvers", nil, f.a.Token)
	aprSameJSON(t, "approvers after accepting", r.Body["approvers"],
		`[{"entry": "bob@example.com", "state": "accepted", "id": "`+f.b.ID+`", "email": "bob@example.com", "name": "bob"}]`)
	if _, _, listed := f.prompted(t, before); !listed {
		t.Error("after accepting, the message sent before is not in bob's list")
	}
	after := f.send()
	if pushed, streamed, listed := f.prompted(t, after); !pushed || !streamed || !listed {
		t.Fatalf("after accepting: pushed %v, streamed %v, listed %v; want all", pushed, streamed, listed)
	}

	// A decline withdraws it all, and the vote with it.
	if r := f.env.do(200, "POST", inv+"/decline", nil, f.b.Token); r.Str("state") != "declined" {
		t.Fatalf("decline: %s", r.Raw)
	}
	declined := f.send()
	if pushed, streamed, listed := f.prompted(t, declined); pushed || streamed || listed {
		t.Fatalf("after declining: pushed %v, streamed %v, listed %v; want nothing", pushed, streamed, listed)
	}
	if _, _, listed := f.prompted(t, after); listed {
		t.Error("after declining, bob still lists the channel's messages")
	}
	wantError(t, f.vote(declined, f.b, "approve", nil), 404, "not_found")
	r = f.env.do(200, "GET", "/v1/channels/"+f.chID+"/approvers", nil, f.a.Token)
	aprSameJSON(t, "approvers after declining", r.Body["approvers"], `[{"entry": "bob@example.com", "state": "declined"}]`)
	f.rcv.settle(t, 0, 50*time.Millisecond)
}

// TestApproverVotesWithoutAccepting: approvers named by email vote on a
// message by its id without accepting anything, and the votes count as
// ever: the quorum resolves with one approval.resolved callback, a second
// vote is 409, the owner who is not named 403 and anyone else 404.
func TestApproverVotesWithoutAccepting(t *testing.T) {
	f := aprSetup(t)
	dan := f.env.newUser("dan@example.com")
	f.env.do(200, "PATCH", "/v1/channels/"+f.chID, approverRule(2, "BOB@example.com", "cat@example.com", "nobody@example.com"), f.a.Token)
	id := f.send()

	if _, a := f.message(id, f.b); a["status"] != "pending" {
		t.Fatalf("bob reads the approval: %v", a)
	}
	bAt := f.env.clock.Now()
	if r := f.vote(id, f.b, "approve", nil); r.Status != 200 || r.Str("approval_status") != "pending" {
		t.Fatalf("bob's vote: %d %s", r.Status, r.Raw)
	}
	wantError(t, f.vote(id, f.b, "approve", nil), 409, "already_voted")
	wantError(t, f.vote(id, f.a, "approve", nil), 403, "forbidden")
	wantError(t, f.vote(id, dan, "approve", nil), 404, "not_found")
	f.env.clock.Advance(time.Second)
	cAt := f.env.clock.Now()
	if r := f.vote(id, f.c, "approve", nil); r.Status != 200 || r.Str("approval_status") != "approved" {
		t.Fatalf("cat's vote: %d %s", r.Status, r.Raw)
	}
	f.checkEvent(f.rcv.wait(t, 1)[0], aprEvent{id: id, status: "approved", approvals: 2, required: 2,
		votes: []aprVote{{f.b, "approve", `{}`, bAt}, {f.c, "approve", `{}`, cAt}}, at: cAt})
	if p := f.poll(id); p.Str("approval_status") != "approved" {
		t.Fatalf("poll: %s", p.Raw)
	}
	f.rcv.settle(t, 1, 100*time.Millisecond)
}

// TestApproverInvitationsFollow: changing the rule keeps the invitations of
// the entries it keeps, invites new ones and drops the others; deleting the
// channel drops them all; an account deleted after accepting returns its
// invitation to invited, and whoever signs up with the address next is
// asked again.
func TestApproverInvitationsFollow(t *testing.T) {
	f := aprSetup(t)
	path := "/v1/channels/" + f.chID
	f.env.do(200, "PATCH", path, approverRule(1, "bob@example.com", "cat@example.com", f.a.ID), f.a.Token)
	if n := f.env.acceptInvitations(f.b); n != 1 {
		t.Fatalf("bob accepted %d invitations, want 1", n)
	}
	// The owner naming themselves needs no answer, and is not invited.
	aprSameJSON(t, "approvers", f.env.do(200, "GET", path+"/approvers", nil, f.a.Token).Body["approvers"],
		`[{"entry": "bob@example.com", "state": "accepted", "id": "`+f.b.ID+`", "email": "bob@example.com", "name": "bob"},
		  {"entry": "cat@example.com", "state": "invited"},
		  {"entry": "`+f.a.ID+`", "state": "accepted", "id": "`+f.a.ID+`", "email": "ann@example.com", "name": "ann"}]`)
	if got := f.env.invitations(f.a); len(got) != 0 {
		t.Errorf("ann is invited to her own channel: %v", got)
	}

	f.env.do(200, "PATCH", path, approverRule(1, "dan@example.com", "bob@example.com"), f.a.Token)
	aprSameJSON(t, "approvers after a change", f.env.do(200, "GET", path+"/approvers", nil, f.a.Token).Body["approvers"],
		`[{"entry": "dan@example.com", "state": "invited"},
		  {"entry": "bob@example.com", "state": "accepted", "id": "`+f.b.ID+`", "email": "bob@example.com", "name": "bob"}]`)
	if got := f.env.invitations(f.c); len(got) != 0 {
		t.Errorf("cat, no longer named, still has invitations %v", got)
	}

	// Bob deletes his account: his vote goes with it, and the address is
	// invited again, for whoever has it next.
	id := f.send()
	f.env.do(200, "DELETE", "/v1/auth/user", nil, f.b.Token)
	aprSameJSON(t, "approvers after bob left", f.env.do(200, "GET", path+"/approvers", nil, f.a.Token).Body["approvers"],
		`[{"entry": "dan@example.com", "state": "invited"}, {"entry": "bob@example.com", "state": "invited"}]`)
	if r := f.vote(id, f.b, "approve", nil); r.Status != 401 {
		t.Fatalf("a deleted account's vote: %d %s", r.Status, r.Raw)
	}
	newBob := f.env.newUser("bob@example.com")
	if got := f.env.invitations(newBob); len(got) != 1 || got[0]["state"] != "invited" {
		t.Fatalf("the address's next owner has invitations %v, want one, invited", got)
	}

	f.env.do(200, "DELETE", path, nil, f.a.Token)
	if got := f.env.invitations(newBob); len(got) != 0 {
		t.Errorf("invitations of a deleted channel: %v", got)
	}
}

// TestDeletedApproverVoteGone: an approver's vote on an open approval goes
// with their account, so the next account of their address votes in its
// place, not beside it: one entry is one vote. A vote on a decided
// approval stays, the record of who decided.
func TestDeletedApproverVoteGone(t *testing.T) {
	f := aprSetup(t)
	f.env.do(200, "PATCH", "/v1/channels/"+f.chID, approverRule(2, "bob@example.com", "cat@example.com"), f.a.Token)
	f.env.acceptInvitations(f.b)
	f.env.acceptInvitations(f.c)
	decided, open := f.send(), f.send()
	for _, id := range []string{decided, open} {
		if r := f.vote(id, f.b, "approve", nil); r.Status != 200 {
			t.Fatalf("bob's vote: %d %s", r.Status, r.Raw)
		}
	}
	if r := f.vote(decided, f.c, "approve", nil); r.Str("approval_status") != "approved" {
		t.Fatalf("cat's vote: %s", r.Raw)
	}
	f.env.do(200, "DELETE", "/v1/auth/user", nil, f.b.Token)
	votes := func(id string) []any {
		return f.env.do(200, "GET", "/v1/messages/"+id, nil, f.a.Token).Body["approval"].(map[string]any)["votes"].([]any)
	}
	if v := votes(open); len(v) != 0 {
		t.Fatalf("the open approval keeps the deleted account's vote: %v", v)
	}
	if v := votes(decided); len(v) != 2 {
		t.Fatalf("the decided approval has %d votes, want both kept", len(v))
	}

	newBob := f.env.newUser("bob@example.com")
	f.env.acceptInvitations(newBob)
	if r := f.vote(open, newBob, "approve", nil); r.Status != 200 || r.Str("approval_status") != "pending" {
		t.Fatalf("the address's next owner's vote: %s, want one vote of two, pending", r.Raw)
	}
}
