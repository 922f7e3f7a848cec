package service

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzStoredResponse feeds DecodeStoredResponse arbitrary bytes: it must
// fail rather than panic on anything but an object (or null), find the
// callback result of either stored shape, and read back what the server
// writes, whatever the fuzzed strings in it.
func FuzzStoredResponse(f *testing.F) {
	plain, _ := json.Marshal(CallbackResult{MessageID: "msg_1", ChannelID: "ch_1", Timestamp: "2026-01-02T03:04:05.678Z",
		TriggeredBy: "why", Responses: map[string]json.RawMessage{"reason": json.RawMessage(`"risky"`), "n": json.RawMessage(`3.5`)}})
	f.Add(plain)
	f.Add(mustStoredApproval(f, CallbackResult{MessageID: "msg_2", ChannelID: "ch_1", Timestamp: "2026-01-02T03:04:05.678Z",
		TriggeredBy: "approve", Responses: map[string]json.RawMessage{}}, "approved"))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"result":null}`))
	f.Add([]byte(`{"result":{},"approval_status":7}`))
	f.Add([]byte(`[1,2]`))
	f.Add([]byte(`{"result":`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := DecodeStoredResponse(raw)
		var members map[string]json.RawMessage
		if json.Unmarshal(raw, &members) != nil {
			if err == nil {
				t.Fatalf("DecodeStoredResponse(%q) accepted a non-object", raw)
			}
		} else if err == nil {
			want, ok := members["result"]
			if !ok {
				want = raw
			}
			if !bytes.Equal(got.Result, want) {
				t.Fatalf("DecodeStoredResponse(%q).Result = %q, want %q", raw, got.Result, want)
			}
			_, hasStatus := members["approval_status"]
			_, hasSummary := members["approval"]
			if (got.Approval != nil) != (ok && (hasStatus || hasSummary)) {
				t.Fatalf("DecodeStoredResponse(%q).Approval = %+v", raw, got.Approval)
			}
		}

		// What the server writes reads back, whatever the strings hold.
		s := string(raw)
		cr := CallbackResult{MessageID: s, ChannelID: s, Timestamp: s, TriggeredBy: s,
			Responses: map[string]json.RawMessage{s: json.RawMessage(`true`)}}
		want, _ := json.Marshal(cr)
		approval := mustStoredApproval(t, cr, s)
		for _, stored := range [][]byte{want, approval} {
			got, err := DecodeStoredResponse(stored)
			if err != nil || !bytes.Equal(got.Result, want) {
				t.Fatalf("DecodeStoredResponse(%s) = %s, %v; want result %s", stored, got.Result, err, want)
			}
		}
		var status string // s as JSON keeps it: invalid UTF-8 replaced
		_ = json.Unmarshal(mustMarshal(t, s), &status)
		if got, _ := DecodeStoredResponse(approval); got.Approval == nil || got.Approval.Status != status {
			t.Fatalf("approval outcome %q lost: %+v", status, got.Approval)
		}
	})
}

// mustStoredApproval is what resolveApproval stores for an approval resolved
// with status and result.
func mustStoredApproval(t testing.TB, result CallbackResult, status string) []byte {
	t.Helper()
	b, err := json.Marshal(storedApproval{
		Result:         result,
		ApprovalStatus: status,
		Approval: ApprovalTally{ApprovalsReceived: 2, RequiredCount: 2, Votes: []Vote{
			{UserID: "u_1", UserName: "Ann", Action: "approve", ResponseData: json.RawMessage(`{}`), RespondedAt: "2026-01-02T03:04:05.000Z"},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustMarshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
