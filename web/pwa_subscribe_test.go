package web_test

// Turning notifications on where the browser's push service cannot be
// reached: a LAN without internet, a browser without a push service. There
// pushManager.subscribe() never settles, and the page must say so.

import (
	"strings"
	"testing"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/page"
)

// hangingSubscribeJS makes PushManager.subscribe never settle, as it does
// when the browser cannot reach its push service, and counts the calls.
const hangingSubscribeJS = `PushManager.prototype.subscribe = function () {
	window.heraldSubscribeCalls = (window.heraldSubscribeCalls || 0) + 1;
	return new Promise(() => {});
};`

// notifyButton is what a turn-on button shows, with the progress and error
// lines of the box it is in.
type notifyButton struct {
	Text     string `json:"text"`
	Disabled bool   `json:"disabled"`
	Progress string `json:"progress"`
	Error    string `json:"error"`
}

func notifyButtonJS(box, btn string) string {
	return `((box) => { const b = box && box.querySelector(` + js(btn) + `);
		const line = (sel) => { const p = box && box.querySelector(sel); return p ? p.textContent.trim() : ""; };
		return b ? {text: b.textContent.trim(), disabled: b.disabled, progress: line(".notify-progress"), error: line(".notify-error")} : {text: "<missing>"};
	})(document.querySelector(` + js(box) + `))`
}

// TestPWASubscribeUnreachable: with a push service that never answers,
// both turn-on buttons (the hint after sign-in and the Devices page's
// control) show that they are at work, give up after 10 seconds with a
// message that says why (the browser's push service, internet access,
// https), and can be pressed again; no device is registered.
func TestPWASubscribeUnreachable(t *testing.T) {
	e := newEnv(t)
	e.addUser(adaEmail, adaPassword)
	tok := e.token(adaEmail, adaPassword)
	b := newBrowser(t, e)
	call(b, "Page.addScriptToEvaluateOnNewDocument", page.AddScriptToEvaluateOnNewDocument,
		page.AddScriptToEvaluateOnNewDocumentParams{Source: hangingSubscribeJS})
	b.setNotifications(cdpbrowser.PermissionSettingGranted)
	b.signIn(adaEmail, adaPassword)

	check := func(where, box, btn, label string) {
		t.Helper()
		state := notifyButtonJS(box, btn)
		b.click(box + " " + btn)
		b.waitFor(where+": progress", state+`.disabled`)
		got := eval[notifyButton](b, state)
		if got.Text != "Turning on…" || !got.Disabled || !strings.Contains(got.Progress, "push service") {
			t.Errorf("%s while subscribing = %+v, want a disabled \"Turning on…\" and a progress line", where, got)
		}
		b.waitFor(where+": the push service unreachable", state+`.error !== ""`)
		got = eval[notifyButton](b, state)
		for _, want := range []string{"could not reach its push service", "internet access", "https", "try again"} {
			if !strings.Contains(got.Error, want) {
				t.Errorf("%s: the error %q does not say %q", where, got.Error, want)
			}
		}
		if got.Text != label || got.Disabled || got.Progress != "" {
			t.Errorf("%s after giving up = %+v, want %q enabled, without the progress line", where, got, label)
		}
	}

	b.waitFor("the hint", shownJS("#notifications-hint-root .notify-hint"))
	check("the hint", "#notifications-hint-root .notify-hint", "button.notify-hint-on", "Turn on notifications")

	b.openView("devices")
	box := "#notifications-control"
	b.waitFor("the control, off", `document.querySelector("#notifications-control").dataset.state === "off"`)
	check("the Devices control", box, "button.notify-toggle", "Turn on notifications")
	if got := eval[string](b, `document.querySelector("#notifications-control").dataset.state`); got != "off" {
		t.Errorf("the control's state after giving up = %q, want off", got)
	}
	if devices := e.list("/v1/devices", "devices", tok); len(devices) != 0 {
		t.Errorf("devices after a subscription that never came = %v, want none", devices)
	}

	// Pressed again, it tries again.
	b.click(box + " button.notify-toggle")
	b.waitFor("a second try", `window.heraldSubscribeCalls === 3 && `+notifyButtonJS(box, "button.notify-toggle")+`.disabled`)
}
