package push

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
)

// TestWebPushServiceWorkerPayload: what a browser decrypts is what its
// service worker needs: the tag that lets a later push replace the
// notification, the channel's name, the app's page of the message, the
// buttons without a form's fields, and the answer credential; an update
// carries where the message stands and no buttons or credential.
func TestWebPushServiceWorkerPayload(t *testing.T) {
	f, wp := newFakePushService(t)
	sub := f.browser.subscription(f.srv.URL + "/push/sw")
	actions := `[{"type":"button","key":"restart","label":"Restart","style":"primary"},
		{"type":"form","key":"why","label":"Explain","fields":[{"type":"text","key":"reason","label":"Reason","required":true}]},
		{"type":"url","label":"Runbook","value":"https://example.com/runbook"}]`
	answer := &Answer{DeviceID: "dev_1", Token: AnswerToken([]byte("k"), "dev_1", "ses_1", "msg_1"),
		URL: "/v1/messages/msg_1/notification-response"}
	tests := []struct {
		name string
		n    Notification
		want map[string]any
	}{
		{"message", Notification{MessageID: "msg_1", ChannelID: "ch_1", ChannelName: "deploys", Title: "Deploy failed",
			Body: "Build **42** failed", Priority: "high", Actions: json.RawMessage(actions), URL: "/#/messages/msg_1", Answer: answer},
			map[string]any{"type": "message", "message_id": "msg_1", "channel_id": "ch_1", "channel": "deploys",
				"title": "Deploy failed", "body": "Build 42 failed", "priority": "high", "tag": "herald-msg_1",
				"url": "/#/messages/msg_1",
				"actions": decodeJSON(t, `[{"type":"button","key":"restart","label":"Restart","style":"primary"},
					{"type":"form","key":"why","label":"Explain"},
					{"type":"url","label":"Runbook","value":"https://example.com/runbook"}]`),
				"answer": map[string]any{"device_id": "dev_1", "token": answer.Token, "url": answer.URL}}},
		{"update", Notification{Kind: KindUpdate, Status: "approved", MessageID: "msg_1", ChannelID: "ch_1", ChannelName: "deploys",
			Title: "Deploy?", Priority: "normal", Actions: json.RawMessage(actions), URL: "/#/messages/msg_1", Answer: answer},
			map[string]any{"type": "update", "status": "approved", "message_id": "msg_1", "channel_id": "ch_1", "channel": "deploys",
				"title": "Deploy?", "body": "", "priority": "normal", "tag": "herald-msg_1", "url": "/#/messages/msg_1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := wp.Send(context.Background(), sub, tt.n); err != nil {
				t.Fatalf("Send: %v", err)
			}
			if got := f.last().Payload; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("decrypted payload = %v\nwant %v", got, tt.want)
			}
		})
	}
}

// TestAnswerTokenBinds: the credential changes with each of the device, the
// session, the message and the key, and an answer credential never passes
// for a resubscribe one.
func TestAnswerTokenBinds(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	base := AnswerToken(key, "dev_1", "ses_1", "msg_1")
	for name, other := range map[string]string{
		"device":      AnswerToken(key, "dev_2", "ses_1", "msg_1"),
		"session":     AnswerToken(key, "dev_1", "ses_2", "msg_1"),
		"message":     AnswerToken(key, "dev_1", "ses_1", "msg_2"),
		"key":         AnswerToken([]byte("another key"), "dev_1", "ses_1", "msg_1"),
		"parts moved": AnswerToken(key, "dev_1ses_1", "", "msg_1"),
		"resubscribe": ResubscribeToken(key, "dev_1", "ses_1"),
	} {
		if TokenEqual(other, base) {
			t.Errorf("changing the %s gives the same credential", name)
		}
	}
	if !TokenEqual(AnswerToken(key, "dev_1", "ses_1", "msg_1"), base) {
		t.Error("the same inputs give another credential")
	}
	if TokenEqual("", "") {
		t.Error("an empty credential is accepted")
	}
}
