package web_test

// Browser test of the account page's Quiet hours card.

import (
	"context"
	"testing"

	"github.com/chromedp/cdproto/emulation"

	"github.com/heraldhq/herald/store"
)

// quietForm is what the Quiet hours card shows.
type quietForm struct {
	Enabled bool   `json:"enabled"`
	Start   string `json:"start"`
	End     string `json:"end"`
	Zone    string `json:"zone"`
	Mode    string `json:"mode"`
}

func (b *browser) quietForm() quietForm {
	b.t.Helper()
	return eval[quietForm](b, `({enabled: document.getElementById("quiet-enabled").checked,
		start: document.getElementById("quiet-start").value, end: document.getElementById("quiet-end").value,
		zone: document.getElementById("quiet-zone").value, mode: document.getElementById("quiet-mode").value})`)
}

// TestUIQuietHours: the card shows the defaults with the browser's own
// zone preselected; an end equal to the start is refused beside the To
// field and nothing is stored; a good form is stored as shown, and shown
// again after a reload.
func TestUIQuietHours(t *testing.T) {
	e, b, ada := setup(t)
	ctx := context.Background()
	call(b, "Emulation.setTimezoneOverride", emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "Asia/Tokyo"})
	b.signIn(adaEmail, adaPassword)
	b.openView("account")
	b.waitFor("the quiet hours card", `document.getElementById("quiet-zone").value !== ""`)
	if got, want := b.quietForm(), (quietForm{Start: "22:00", End: "07:00", Zone: "Asia/Tokyo", Mode: "hold"}); got != want {
		t.Fatalf("quiet hours card = %+v, want the defaults in the browser's zone %+v", got, want)
	}

	b.click("#quiet-enabled")
	b.choose("#quiet-start", "23:00")
	b.choose("#quiet-end", "23:00")
	b.click("#quiet-save")
	b.waitFieldError("#quiet-end", "To must differ from start (an end before the start runs past midnight).")
	if q, err := e.st.QuietHours(ctx, ada.ID); err != nil || q != (store.QuietHours{}) {
		t.Fatalf("after a refusal the stored quiet hours are %+v, %v; want none", q, err)
	}
	if b.shown("#quiet-done") {
		t.Error("the card says saved after a refusal")
	}

	b.choose("#quiet-end", "06:30")
	b.noFieldError("#quiet-end")
	b.choose("#quiet-mode", "silent")
	b.click("#quiet-save")
	b.waitFor("saved", shownJS("#quiet-done")+` && `+loaded())
	mustErrorEmpty(b)
	want := store.QuietHours{Enabled: true, Start: "23:00", End: "06:30", TimeZone: "Asia/Tokyo", Mode: store.QuietSilent}
	if q, err := e.st.QuietHours(ctx, ada.ID); err != nil || q != want {
		t.Fatalf("stored quiet hours = %+v, %v; want %+v", q, err, want)
	}

	b.reload()
	b.waitView("account")
	b.waitFor("the quiet hours card", `document.getElementById("quiet-zone").value !== ""`)
	if got, want := b.quietForm(), (quietForm{Enabled: true, Start: "23:00", End: "06:30", Zone: "Asia/Tokyo", Mode: "silent"}); got != want {
		t.Errorf("after a reload the card = %+v, want %+v", got, want)
	}
}
