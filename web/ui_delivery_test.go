package web_test

// Browser tests of the callback's delivery log, Redeliver, and the
// message filters.

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/delivery"
	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/netguard"
)

// startQueue runs the callback queue over e's store, as serve does.
func startQueue(t *testing.T, e *env, maxAttempts int) {
	t.Helper()
	queue := delivery.New(e.st, delivery.Config{Workers: 1, Timeout: 5 * time.Second, BackoffBase: 50 * time.Millisecond,
		BackoffMax: 100 * time.Millisecond, MaxAttempts: maxAttempts, UserAgent: "Herald-Webhooks/test",
		Guard: netguard.Policy{AllowLoopback: true}}, delivery.Options{Logger: slog.New(slog.DiscardHandler)})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = queue.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// TestUIDeliveryLog: a dead-lettered callback shows as failed, its log
// lists each attempt's status code, and Redeliver (asked first) sends it
// again; the filters find it.
func TestUIDeliveryLog(t *testing.T) {
	var status atomic.Int32
	status.Store(http.StatusServiceUnavailable)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(int(status.Load())) }))
	t.Cleanup(rcv.Close)
	e, b, _ := setup(t)
	startQueue(t, e, 2)
	tok := e.token(adaEmail, adaPassword)
	_, webhook := e.channel(tok, "Deploys")
	id := e.send(webhook, map[string]any{"title": "Restart the web tier?", "callback_url": rcv.URL + "/hook",
		"actions": []map[string]any{{"type": "button", "key": "yes", "label": "Restart"}}})
	plain := e.send(webhook, map[string]any{"title": "Nightly backup finished", "body": "all good"})
	if st, body := e.api(http.MethodPost, "/v1/messages/"+id+"/respond", tok, map[string]string{"action": "yes"}); st != 200 {
		t.Fatalf("respond: %d %v", st, body)
	}
	testkit.Eventually(t, waitTimeout, func() error {
		if d, _ := e.apiMessage(tok, id)["delivery"].(map[string]any); d == nil || d["state"] != "failed" {
			return fmt.Errorf("the callback never dead-lettered: %v", d)
		}
		return nil
	})

	b.signIn(adaEmail, adaPassword)
	b.openView("messages")
	b.waitFor("the message", shownJS(articleSel(id))+" && "+loaded())
	sel := articleSel(id)
	if got := b.text(sel + " .delivery-summary"); got != "Callback failed · 2 attempts · last answer 503" {
		t.Errorf("delivery summary = %q", got)
	}
	b.click(sel + " button.delivery-log-toggle")
	b.waitFor("the log", `document.querySelectorAll(`+js(sel+" .delivery-log tr.attempt")+`).length === 2 && `+loaded())
	attempts := eval[[]string](b, `Array.from(document.querySelectorAll(`+js(sel+" .delivery-log tr.attempt")+`)).map(r => r.querySelector(".attempt-code").textContent + " " + r.querySelector(".attempt-error").textContent)`)
	if fmt.Sprint(attempts) != "[503 receiver answered 503 503 receiver answered 503]" {
		t.Errorf("attempts shown %q", attempts)
	}

	// The filters: failed callbacks, then words.
	b.choose("#messages-state", "failed")
	b.waitFor("only the failed one", `document.querySelectorAll("#messages article.message").length === 1 && !!`+articleJS(id)+` && `+loaded())
	b.choose("#messages-state", "")
	b.waitFor("both", `document.querySelectorAll("#messages article.message").length === 2 && `+loaded())
	b.fill("#messages-q", "backup")
	b.press("#messages-q", "\r")
	b.waitFor("the search", `document.querySelectorAll("#messages article.message").length === 1 && !!`+articleJS(plain)+` && `+loaded())
	b.fill("#messages-q", "nothing matches this")
	b.press("#messages-q", "\r")
	b.waitFor("no match", `document.querySelectorAll("#messages article.message").length === 0 && `+loaded())
	if got := b.text("#messages-empty"); got != "No message matches. Change the filters or the search words." {
		t.Errorf("#messages-empty = %q", got)
	}
	b.fill("#messages-q", "")
	b.press("#messages-q", "\r")
	b.waitFor("both again", `document.querySelectorAll("#messages article.message").length === 2 && `+loaded())

	// Redeliver: asked, then queued again; the receiver now answers 204.
	status.Store(http.StatusNoContent)
	b.dismissNext()
	b.click(sel + " button.message-redeliver")
	b.waitFor("the question", loaded())
	if d, _ := e.apiMessage(tok, id)["delivery"].(map[string]any); d["state"] != "failed" {
		t.Errorf("a cancelled Redeliver redelivered: %v", d)
	}
	b.click(sel + " button.message-redeliver")
	b.waitFor("redelivered", loaded())
	mustErrorEmpty(b)
	if !strings.Contains(b.lastDialog(), "Send this callback again") {
		t.Errorf("Redeliver asked %q", b.lastDialog())
	}
	testkit.Eventually(t, waitTimeout, func() error {
		if d, _ := e.apiMessage(tok, id)["delivery"].(map[string]any); d == nil || d["state"] != "delivered" {
			return fmt.Errorf("the redelivery never arrived: %v", d)
		}
		return nil
	})
	b.reload()
	b.waitView("messages")
	b.waitFor("delivered", `!!document.querySelector(`+js(sel+" .delivery-summary")+`) && `+loaded())
	if got := b.text(sel + " .delivery-summary"); got != "Callback delivered · 1 attempt · last answer 204" {
		t.Errorf("after Redeliver the summary = %q", got)
	}
}
