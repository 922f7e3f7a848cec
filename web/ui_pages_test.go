package web_test

// Browser tests of what a newcomer reads on the pages: one way to turn
// notifications on where the page has its control, no app that does not
// exist, no heading said twice, states in plain words.

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/internal/testkit"
)

// visibleTurnOnJS counts the visible buttons that turn notifications on.
const visibleTurnOnJS = `Array.from(document.querySelectorAll("button")).filter((b) =>
	b.textContent.trim() === "Turn on notifications" && b.getClientRects().length > 0).length`

// TestUINotificationsPages: the Devices and Account pages each offer one
// "Turn on notifications" (their control, not the hint above it too), the
// Devices page promises no app to install, and the Account page says
// "Notifications in this browser" once, in one card. The hint stays on
// the other pages.
func TestUINotificationsPages(t *testing.T) {
	_, b, _ := setup(t)
	b.signIn(adaEmail, adaPassword)
	b.waitFor("the hint", shownJS("#notifications-hint-root .notify-hint"))
	if n := eval[int](b, visibleTurnOnJS); n != 1 {
		t.Errorf("the channels page shows %d Turn on notifications buttons, want the hint's", n)
	}

	b.openView("devices")
	b.waitFor("the control, off", `document.querySelector("#notifications-control").dataset.state === "off"`)
	if n := eval[int](b, visibleTurnOnJS); n != 1 {
		t.Errorf("the devices page shows %d Turn on notifications buttons, want 1", n)
	}
	if !b.shown("#notifications-control button.notify-toggle") {
		t.Error("the devices page's own control has no button")
	}
	text := eval[string](b, `document.getElementById("view-devices").innerText`)
	if app := regexp.MustCompile(`(?i)\b(apps?|app store|play store|install)\b`).FindString(text); app != "" {
		t.Errorf("the devices page speaks of %q, an app Herald does not have:\n%s", app, text)
	}
	if got := b.text("#devices-empty"); got != "No devices yet. Turn on notifications above to add this browser. To add a phone, open Herald in its browser, sign in and turn them on there (on an iPhone, add Herald to the home screen first)." {
		t.Errorf("#devices-empty = %q", got)
	}

	b.openView("account")
	b.waitFor("the control", `["off", "on", "blocked", "unsupported"].includes(document.querySelector("#notifications-root").dataset.state)`)
	headings := eval[[]string](b, `Array.from(document.querySelectorAll("#view-account h1, #view-account h2")).filter((h) => h.getClientRects().length > 0).map((h) => h.textContent.trim())`)
	if want := []string{"Account", "You", "Change password", "Sign-in identities", "Notifications in this browser", "Quiet hours", "Sessions"}; fmt.Sprint(headings) != fmt.Sprint(want) {
		t.Errorf("the account page's headings = %q, want %q", headings, want)
	}
	if n := eval[int](b, `document.querySelectorAll("#view-account .card .card").length`); n != 0 {
		t.Errorf("the account page nests %d cards in cards", n)
	}
	if n := eval[int](b, visibleTurnOnJS); n != 1 {
		t.Errorf("the account page shows %d Turn on notifications buttons, want 1", n)
	}

	// The words of the states a message can be in.
	b.openView("messages")
	opts := eval[[][]string](b, `Array.from(document.querySelectorAll("#messages-state option")).map((o) => [o.value, o.textContent])`)
	want := [][]string{{"", "Everything"}, {"pending", "Waiting for an answer"}, {"answered", "Answered"},
		{"submitted", "Answered, the sender has not fetched it yet"}, {"already_read", "Answered, the sender has the answer"},
		{"expired", "Expired"}, {"failed", "Callback failed"}}
	if fmt.Sprint(opts) != fmt.Sprint(want) {
		t.Errorf("#messages-state options = %q, want %q", opts, want)
	}
	if n := eval[int](b, visibleTurnOnJS); n != 1 {
		t.Errorf("back on the messages page, %d Turn on notifications buttons, want the hint's", n)
	}
}

// TestUIAnswerWords: where an answered message stands, in words: answered;
// answered and fetched by the sender ("the sender has the answer");
// answered but not fetched in time; and, for a sender with a callback (who
// was sent the answer), answered.
func TestUIAnswerWords(t *testing.T) {
	clk := testkit.NewClock()
	e := newEnvClock(t, clk, func(c *config.Config) { c.Polling.ResponseTTL = config.Duration{Duration: time.Minute} })
	e.addUser(adaEmail, adaPassword)
	b := newBrowser(t, e)
	tok := e.token(adaEmail, adaPassword)
	_, webhook := e.channel(tok, "Deploys")
	ask := func(title string, payload map[string]any) string {
		t.Helper()
		payload["title"] = title
		payload["actions"] = []map[string]any{{"type": "button", "key": "yes", "label": "Yes"}}
		id := e.send(webhook, payload)
		if status, body := e.api(http.MethodPost, "/v1/messages/"+id+"/respond", tok, map[string]string{"action": "yes"}); status != http.StatusOK {
			t.Fatalf("respond %s: %d %v", title, status, body)
		}
		return id
	}
	fetched := ask("Fetched", map[string]any{})
	if status, poll := e.poll(webhook, fetched); status != http.StatusOK || poll["status"] != "submitted" {
		t.Fatalf("poll: %d %v", status, poll)
	}
	late := ask("Never fetched", map[string]any{})
	called := ask("Called back", map[string]any{"callback_url": "https://hooks.example.com/deploy"})
	clk.Advance(time.Minute + time.Second) // the answers not fetched expire
	fresh := ask("Just answered", map[string]any{})

	b.signIn(adaEmail, adaPassword)
	b.openView("messages")
	for id, want := range map[string]string{
		fetched: "Answered · the sender has the answer",
		late:    "Answered · the sender did not fetch it in time",
		called:  "Answered",
		fresh:   "Answered",
	} {
		b.waitFor("the message", shownJS(articleSel(id)))
		if got := b.text(articleSel(id) + " span.message-status"); got != want {
			t.Errorf("%s: status %q, want %q", b.text(articleSel(id)+" .message-title"), got, want)
		}
	}
}

// TestUIChannelColour: the colour is picked with a colour picker and kept
// as #RRGGBB; a channel made without picking one has none; where messages
// are listed, each carries its channel's colour as a mark by the channel's
// name.
func TestUIChannelColour(t *testing.T) {
	e, b, u := setup(t)
	tok := e.token(adaEmail, adaPassword)
	b.signIn(adaEmail, adaPassword)
	if got := eval[string](b, `document.getElementById("channel-color").type`); got != "color" {
		t.Errorf("#channel-color is an input of type %q, want color", got)
	}
	if got := b.text("#channel-color-value"); got != "No colour" {
		t.Errorf("before a colour is picked the field says %q, want No colour", got)
	}
	create := func(name, color string) {
		t.Helper()
		b.fill("#channel-name", name)
		if color != "" {
			b.choose("#channel-color", color)
			if got := b.text("#channel-color-value"); got != strings.ToUpper(color) {
				t.Errorf("after picking %s the field says %q", color, got)
			}
		}
		b.click("#channel-create-submit")
		b.waitFor("row "+name, rowWithJS("table#channels", "data-channel-id", "td.channel-name", name)+" && "+loaded())
		if got := b.text("#channel-color-value"); got != "No colour" {
			t.Errorf("after creating %s the colour field says %q, want No colour", name, got)
		}
	}
	create("Backups", "#2da44e")
	create("Printer", "")
	stored := map[string]string{}
	chs, err := e.st.ListChannels(context.Background(), u.ID)
	if err != nil {
		t.Fatal(err)
	}
	webhooks := map[string]string{}
	for _, c := range chs {
		stored[c.Name] = c.Color
	}
	for _, c := range e.list("/v1/channels", "channels", tok) {
		webhooks[c["name"].(string)] = c["webhook_url"].(string)
	}
	if stored["Backups"] != "#2DA44E" || stored["Printer"] != "" {
		t.Errorf("stored colours = %v, want Backups #2DA44E and Printer none", stored)
	}
	// A picked colour can be taken back before creating.
	b.choose("#channel-color", "#bf3989")
	b.click("#channel-color-clear")
	if got := b.text("#channel-color-value"); got != "No colour" || b.shown("#channel-color-clear") {
		t.Errorf("after No colour the field says %q", got)
	}

	backup := e.send(webhooks["Backups"], map[string]any{"title": "Backup done"})
	printer := e.send(webhooks["Printer"], map[string]any{"title": "Out of paper"})
	b.openView("messages")
	markJS := func(id string) string {
		return `((s) => s ? getComputedStyle(s).backgroundColor + (s.getClientRects().length ? "" : " hidden") : "none")(document.querySelector(` + js(articleSel(id)+" .message-channel .swatch") + `))`
	}
	b.waitFor("the messages", shownJS(articleSel(backup))+" && "+shownJS(articleSel(printer)))
	if got := eval[string](b, markJS(backup)); got != "rgb(45, 164, 78)" {
		t.Errorf("the Backups message's mark = %q, want the channel's #2DA44E", got)
	}
	if got := eval[string](b, markJS(printer)); got != "none" {
		t.Errorf("the Printer message's mark = %q, want none (no colour)", got)
	}
	if got := b.text(articleSel(backup) + " .message-channel"); got != "Backups" {
		t.Errorf("the channel's name by the mark = %q", got)
	}
}

// TestUIUserPlanDefault: the Users page creates a user on the plan the
// command line gives one, pro, unless another is picked.
func TestUIUserPlanDefault(t *testing.T) {
	e, b, ada := setup(t)
	ctx := context.Background()
	if err := e.st.SetUserAdmin(ctx, ada.ID, true); err != nil {
		t.Fatal(err)
	}
	b.signIn(adaEmail, adaPassword)
	b.openView("users")
	if got := eval[string](b, `document.getElementById("user-plan").value`); got != "pro" {
		t.Errorf("the create form's plan = %q, want pro", got)
	}
	b.fill("#user-email", "carol@example.com")
	b.fill("#user-password", "carol's password!")
	b.click("#user-create-submit")
	b.waitFor("Carol's row", `!!document.querySelector('#users tr[data-email="carol@example.com"]') && `+loaded())
	if u, err := e.st.UserByEmail(ctx, "carol@example.com"); err != nil || u.Plan != "pro" {
		t.Errorf("the created user: %+v, %v; want plan pro", u, err)
	}
}
