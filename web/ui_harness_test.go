package web_test

// Real-browser tests of the admin UI: a headless Chromium, driven with
// chromedp, against a real Herald (server, store, SQLite file) in-process.
// Each test checks what the user sees and what the server stored.
//
// The page's element contract (ids, classes, data-view/data-loading) is the
// one the UI is built against; the tests wait on document.body.dataset, never
// on sleeps.

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/docs"
	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/schedule"
	"github.com/heraldhq/herald/server"
	"github.com/heraldhq/herald/service"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/web"
)

const (
	testTimeout = 60 * time.Second // the whole test, browser included
	waitTimeout = 15 * time.Second // one wait for the page
)

// ---------------------------------------------------------------------------
// Server under test

type env struct {
	t    *testing.T
	st   *store.Store
	srv  *httptest.Server
	base string
	http *http.Client
}

// newEnv starts Herald over a fresh database, served by httptest with
// base_url pointing at the test server (so webhook_url values work).
func newEnv(t *testing.T, configure ...func(*config.Config)) *env {
	t.Helper()
	return newEnvClock(t, nil, configure...)
}

// newEnvClock is newEnv whose store, rules and server read clk (the real
// time when clk is nil): a test that needs time to pass moves it.
func newEnvClock(t *testing.T, clk *testkit.Clock, configure ...func(*config.Config)) *env {
	t.Helper()
	now := time.Now
	if clk != nil {
		now = clk.Now
	}
	dir := t.TempDir()
	st, err := store.Open(context.Background(), filepath.Join(dir, "herald.db"), store.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(nil)
	cfg := config.Default()
	cfg.DataDir = dir
	cfg.BaseURL = "http://" + srv.Listener.Addr().String()
	// The UI makes many API calls; the free plan's 60 a minute is for people.
	testkit.UnlimitedPlans(&cfg)
	// The callback receivers are httptest servers on 127.0.0.1, and the
	// delivery queues allow loopback: so does the send.
	cfg.Delivery.AllowLoopback = true
	for _, f := range configure {
		f(&cfg)
	}
	opts := service.OptionsFrom(cfg)
	opts.Now = now
	svc := service.New(st, opts)
	s := server.New(server.Options{Config: cfg, Store: st, Service: svc, Logger: slog.New(slog.DiscardHandler),
		Version: "test", UI: web.Handler(), Now: now})
	jobs := schedule.New(slog.New(slog.DiscardHandler))
	svc.Schedule(jobs)
	s.Schedule(jobs)
	srv.Config.Handler = s.Handler()
	srv.Start()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = jobs.Run(ctx) }()
	t.Cleanup(func() {
		srv.Close()
		cancel()
		<-done
		if err := st.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	})
	if srv.URL != cfg.BaseURL {
		t.Fatalf("test server at %s, base_url %s", srv.URL, cfg.BaseURL)
	}
	return &env{t: t, st: st, srv: srv, base: srv.URL, http: &http.Client{Timeout: 10 * time.Second}}
}

// addUser creates a user with a local password.
func (e *env) addUser(email, password string) *store.User {
	e.t.Helper()
	hash, err := auth.HashPassword(context.Background(), password)
	if err != nil {
		e.t.Fatal(err)
	}
	u := &store.User{Email: email, Name: strings.Split(email, "@")[0], Plan: "free", PasswordHash: hash}
	if err := e.st.CreateUser(context.Background(), u); err != nil {
		e.t.Fatal(err)
	}
	return u
}

// token signs in through the API and returns a bearer access token, so that
// the test can check through the API what the UI did.
func (e *env) token(email, password string) string {
	e.t.Helper()
	status, body := e.api(http.MethodPost, "/v1/auth/local", "", map[string]string{"email": email, "password": password})
	if status != http.StatusOK {
		e.t.Fatalf("POST /v1/auth/local: %d %v", status, body)
	}
	tok, _ := body["access_token"].(string)
	if tok == "" {
		e.t.Fatalf("POST /v1/auth/local: no access_token in %v", body)
	}
	return tok
}

// api sends a JSON request with an optional bearer token and returns the
// status and the decoded JSON object (nil when the body is not one).
func (e *env) api(method, path, token string, body any) (int, map[string]any) {
	e.t.Helper()
	url := path
	if strings.HasPrefix(path, "/") {
		url = e.base + path
	}
	r := testkit.Do(e.t, e.http, method, url, body, token)
	return r.Status, r.Body
}

// list returns the array under key of GET path (e.g. "channels" of
// /v1/channels), failing the test unless the answer is 200.
func (e *env) list(path, key, token string) []map[string]any {
	e.t.Helper()
	status, body := e.api(http.MethodGet, path, token, nil)
	if status != http.StatusOK {
		e.t.Fatalf("GET %s: %d %v", path, status, body)
	}
	raw, ok := body[key].([]any)
	if !ok {
		e.t.Fatalf("GET %s: no %q array in %v", path, key, body)
	}
	out := make([]map[string]any, len(raw))
	for i, v := range raw {
		out[i], _ = v.(map[string]any)
	}
	return out
}

// ---------------------------------------------------------------------------
// Browser

// chromiumPath finds the browser. Missing is a failure in CI (which installs
// chromium) and a skip elsewhere.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no chromium, chromium-browser or google-chrome on PATH; CI must install chromium (.ci/run)")
	}
	testkit.Skip(t, "no chromium, chromium-browser or google-chrome on PATH (apt-get install chromium), so the admin UI is not tested in a browser")
	return ""
}

// TestMain checks every API call the tests make against the OpenAPI
// description, and says, in a normal go test run where t.Skip is silent,
// that the browser tests were skipped.
func TestMain(m *testing.M) {
	contract, err := testkit.LoadContract(docs.OpenAPI)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	stop := testkit.CheckCalls(contract)
	code := m.Run()
	stop()
	testkit.AnnounceSkips("github.com/heraldhq/herald/web")
	os.Exit(code)
}

// browser is one tab (in its own cookie jar when made by isolatedTab).
type browser struct {
	t   *testing.T
	e   *env
	ctx context.Context

	mu         sync.Mutex
	exceptions []string // uncaught page exceptions: test errors
	notes      []string // dialogs accepted and console errors: logged
	dialogs    []string // every dialog's message, in order
	refuse     int      // how many of the next dialogs to dismiss
}

// dismissNext makes the browser answer Cancel to the next dialog (then OK
// again, as by default).
func (b *browser) dismissNext() {
	b.mu.Lock()
	b.refuse++
	b.mu.Unlock()
}

// dialogCount is how many dialogs the page has opened.
func (b *browser) dialogCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.dialogs)
}

// lastDialog is the message of the last dialog, or "".
func (b *browser) lastDialog() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.dialogs) == 0 {
		return ""
	}
	return b.dialogs[len(b.dialogs)-1]
}

// newBrowser starts a headless Chromium for this test. The browser lives at
// most testTimeout, so a hung page cannot hang the test run.
func newBrowser(t *testing.T, e *env) *browser {
	t.Helper()
	path := chromiumPath(t)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	// Start the browser with the test's context, not a shorter one: the first
	// Run binds the browser's life to its context.
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start %s: %v", path, err)
	}
	return attach(t, e, bctx)
}

// isolatedTab opens a tab in a fresh browser context: its own cookies, as a
// second person on another machine would have.
func (b *browser) isolatedTab() *browser {
	b.t.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithNewBrowserContext())
	b.t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		b.t.Fatalf("open isolated tab: %v", err)
	}
	return attach(b.t, b.e, ctx)
}

// attach records uncaught page exceptions (reported as test errors at the
// end), logs console errors, and accepts any confirm() the UI asks unless
// told to dismiss it (dismissNext).
func attach(t *testing.T, e *env, ctx context.Context) *browser {
	b := &browser{t: t, e: e, ctx: ctx}
	exceptions := chromedp.Events(ctx, runtime.ExceptionThrown)
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	logs := chromedp.Events(ctx, log.EntryAdded)
	go func() {
		for ev, err := range exceptions {
			if err != nil {
				return
			}
			d := ev.ExceptionDetails
			msg := d.Text
			if d.Exception != nil && d.Exception.Description != "" {
				msg += " " + d.Exception.Description
			}
			b.mu.Lock()
			b.exceptions = append(b.exceptions, fmt.Sprintf("%s (%s:%d)", msg, d.URL, d.LineNumber+1))
			b.mu.Unlock()
		}
	}()
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.notes = append(b.notes, string(ev.Type)+": "+ev.Message)
			b.dialogs = append(b.dialogs, ev.Message)
			accept := b.refuse == 0
			if !accept {
				b.refuse--
			}
			b.mu.Unlock()
			if _, err := chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: accept}); err != nil {
				return
			}
		}
	}()
	go func() {
		for ev, err := range logs {
			if err != nil {
				return
			}
			if en := ev.Entry; en != nil && en.Level == log.EntryLevelError {
				b.mu.Lock()
				b.notes = append(b.notes, "console error: "+en.Text+" "+en.URL)
				b.mu.Unlock()
			}
		}
	}()
	// The iterators end with the tab's context.
	t.Cleanup(func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, d := range b.notes {
			t.Logf("page: %s", d)
		}
		for _, x := range b.exceptions {
			t.Errorf("uncaught exception in the page: %s", x)
		}
	})
	return b
}

// do runs actions, failing the test on error.
func (b *browser) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, waitTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v\npage state: %s", what, err, b.state())
	}
}

// eval evaluates a JavaScript expression and decodes its value.
func eval[T any](b *browser, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, waitTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v\npage state: %s", expr, err, b.state())
	}
	return v
}

// awaitJS evaluates an expression that gives a promise and returns its value.
func awaitJS[T any](b *browser, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, waitTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v\npage state: %s", expr, err, b.state())
	}
	return v
}

// waitFor polls a JavaScript condition until it is true. It polls from Go
// with a fresh Runtime.evaluate each time rather than with chromedp.Poll,
// whose in-page poll task does not survive a navigation or reload, and on
// timeout it reports the page's state.
func (b *browser) waitFor(what, cond string) {
	b.t.Helper()
	expr := `(() => { try { return !!(` + cond + `); } catch (e) { return false; } })()`
	testkit.Eventually(withPageState{b.t, b}, waitTimeout, func() error {
		ctx, cancel := context.WithTimeout(b.ctx, 2*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		cancel()
		if err == nil && ok {
			return nil
		}
		if b.ctx.Err() != nil {
			b.t.Fatalf("the browser went away waiting for %s (%s): %v\npage state: %s", what, cond, b.ctx.Err(), b.state())
		}
		return fmt.Errorf("waiting for %s (%s); last error: %v", what, cond, err)
	})
}

// withPageState fails a test as its TB does, with the page's state added
// to the message.
type withPageState struct {
	testing.TB
	b *browser
}

func (w withPageState) Fatalf(format string, args ...any) {
	w.Helper()
	w.TB.Fatalf(format+"\npage state: %s", append(args, w.b.state())...)
}

// state describes the page for failure messages.
func (b *browser) state() string {
	ctx, cancel := context.WithTimeout(b.ctx, 2*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => { try { return JSON.stringify({
		url: location.href,
		view: document.body && document.body.dataset.view,
		loading: document.body && document.body.dataset.loading,
		shownViews: Array.from(document.querySelectorAll("section[id^='view-']")).filter(s => !s.hidden).map(s => s.id),
		error: document.getElementById("error") ? document.getElementById("error").textContent : "<no #error>",
		main: document.body ? document.body.innerText.slice(0, 1500) : "",
	}); } catch (e) { return "state: " + e; } })()`))
	if err != nil {
		return "(unavailable: " + err.Error() + ")"
	}
	return s
}

// js quotes s as a JavaScript string literal.
func js(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func (b *browser) navigate(path string) {
	b.t.Helper()
	b.do("navigate to "+path, chromedp.Navigate(b.e.base+path))
}

func (b *browser) reload() {
	b.t.Helper()
	b.do("reload", chromedp.Reload())
}

// click clicks the first element matching the CSS selector, as a mouse would.
func (b *browser) click(sel string) {
	b.t.Helper()
	b.do("click "+sel, chromedp.Click(chromedp.CSS(sel)))
}

// fill types value into an input, replacing what it held.
func (b *browser) fill(sel, value string) {
	b.t.Helper()
	// chromedp.SetValue(sel, "") reports an empty value as a failure.
	if !eval[bool](b, `(() => { const el = document.querySelector(`+js(sel)+`); if (!el) return false; el.value = ""; return true; })()`) {
		b.t.Fatalf("fill %s: no such element\npage state: %s", sel, b.state())
	}
	b.do("fill "+sel, chromedp.SendKeys(chromedp.CSS(sel), value))
	if got := eval[string](b, `document.querySelector(`+js(sel)+`).value`); got != value {
		b.t.Fatalf("fill %s: the field holds %q after typing %q", sel, got, value)
	}
}

// choose selects an option of a select (or sets an input that cannot be
// typed into, like a colour picker) and fires input and change events.
func (b *browser) choose(sel, value string) {
	b.t.Helper()
	ok := eval[bool](b, `(() => { const el = document.querySelector(`+js(sel)+`); if (!el) return false;
		el.value = `+js(value)+`; el.dispatchEvent(new Event("input", {bubbles: true}));
		el.dispatchEvent(new Event("change", {bubbles: true})); return el.value === `+js(value)+`; })()`)
	if !ok {
		b.t.Fatalf("could not set %s to %q\npage state: %s", sel, value, b.state())
	}
}

// text is the trimmed textContent of the first element matching sel, or
// "<missing>" when there is none.
func (b *browser) text(sel string) string {
	b.t.Helper()
	return eval[string](b, `(() => { const el = document.querySelector(`+js(sel)+`); return el ? el.textContent.trim() : "<missing>"; })()`)
}

// shown reports whether the element exists and takes up space on the page
// (not hidden by the hidden attribute, display:none or an ancestor's).
func (b *browser) shown(sel string) bool {
	b.t.Helper()
	return eval[bool](b, `(() => { const el = document.querySelector(`+js(sel)+`);
		return !!el && el.getClientRects().length > 0 && getComputedStyle(el).visibility !== "hidden"; })()`)
}

func shownJS(sel string) string {
	return `((el) => !!el && el.getClientRects().length > 0 && getComputedStyle(el).visibility !== "hidden")(document.querySelector(` + js(sel) + `))`
}

var views = []string{"signin", "channels", "messages", "approvals", "keys", "devices", "folders", "account", "users", "server"}

// waitView waits until the page has rendered view name and checks that it is
// the only view shown.
func (b *browser) waitView(name string) {
	b.t.Helper()
	b.waitFor("view "+name+" rendered",
		`document.body.dataset.view === `+js(name)+` && document.body.dataset.loading === "false"`)
	for _, v := range views {
		sel := "#view-" + v
		present := eval[bool](b, `!!document.querySelector(`+js(sel)+`)`)
		if !present {
			b.t.Errorf("contract: section %s is missing", sel)
			continue
		}
		hiddenAttr := eval[bool](b, `document.querySelector(`+js(sel)+`).hidden`)
		if v == name {
			if hiddenAttr || !b.shown(sel) {
				b.t.Errorf("view %s rendered but %s is not visible (hidden attribute: %v)", name, sel, hiddenAttr)
			}
		} else {
			if !hiddenAttr {
				b.t.Errorf("on view %s, %s has no hidden attribute", name, sel)
			}
			if b.shown(sel) {
				b.t.Errorf("on view %s, %s is visible too", name, sel)
			}
		}
	}
	if name != "signin" {
		if h := eval[string](b, `location.hash`); h != "#/"+name {
			b.t.Errorf("on view %s the location hash is %q, want %q", name, h, "#/"+name)
		}
	}
}

// openView goes to a view with its nav link, as a user would.
func (b *browser) openView(name string) {
	b.t.Helper()
	b.click("a#nav-" + name)
	b.waitView(name)
}

// cookie returns the value of a cookie the browser holds for the server.
func (b *browser) cookie(name string) (string, bool) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, waitTimeout)
	defer cancel()
	res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{b.e.base + "/"}})
	if err != nil {
		b.t.Fatalf("get cookies: %v", err)
	}
	for _, c := range res.Cookies {
		if c.Name == name && c.Value != "" {
			return c.Value, true
		}
	}
	return "", false
}

// signIn signs in through the sign-in form and waits for the channels view.
func (b *browser) signIn(email, password string) {
	b.t.Helper()
	b.navigate("/")
	b.waitView("signin")
	b.fill("#signin-email", email)
	b.fill("#signin-password", password)
	b.click("#signin-submit")
	b.waitView("channels")
	if got := b.text("#whoami"); got != email {
		b.t.Errorf("#whoami shows %q, want %q", got, email)
	}
}

// row is one table row: its data-*-id and the text of the cells asked for.
type row struct {
	ID    string            `json:"id"`
	Cells map[string]string `json:"cells"`
}

// rowsJS is an expression giving the rows of table tbl (rows with attribute
// idAttr) as []row, with the trimmed text of each cell selector.
func rowsJS(tbl, idAttr string, cells ...string) string {
	sels, _ := json.Marshal(cells)
	return `Array.from(document.querySelectorAll(` + js(tbl+" tbody tr["+idAttr+"]") + `)).map(r => {
		const cells = {};
		for (const s of ` + string(sels) + `) { const el = r.querySelector(s); cells[s] = el ? el.textContent.trim() : "<missing>"; }
		return {id: r.getAttribute(` + js(idAttr) + `), cells};
	})`
}

func (b *browser) rows(tbl, idAttr string, cells ...string) []row {
	b.t.Helper()
	return eval[[]row](b, rowsJS(tbl, idAttr, cells...))
}

// findRow returns the row whose cell sel reads text.
func findRow(rows []row, sel, text string) (row, bool) {
	for _, r := range rows {
		if r.Cells[sel] == text {
			return r, true
		}
	}
	return row{}, false
}

// rowWithJS is a condition: table tbl has a row whose cell sel reads text.
func rowWithJS(tbl, idAttr, sel, text string) string {
	return rowsJS(tbl, idAttr, sel) + `.some(r => r.cells[` + js(sel) + `] === ` + js(text) + `)`
}

func loaded() string { return `document.body.dataset.loading === "false"` }

func mustErrorEmpty(b *browser) {
	b.t.Helper()
	if msg := b.text("#error"); msg != "" {
		b.t.Errorf("#error shows %q, want it empty", msg)
	}
}

// press sends keys (see package kb) to the element matching sel, focusing it
// first.
func (b *browser) press(sel, keys string) {
	b.t.Helper()
	b.do("press keys in "+sel, chromedp.SendKeys(chromedp.CSS(sel), keys))
}

// renameForm is what an inline rename form shows.
type renameForm struct {
	Value      string `json:"value"`
	Focused    bool   `json:"focused"`
	AllChosen  bool   `json:"allChosen"`
	Label      string `json:"label"`
	SaveText   string `json:"saveText"`
	SaveType   string `json:"saveType"`
	CancelText string `json:"cancelText"`
}

// openRename clicks the Rename button of row rowSel (kind "channel" or
// "folder") and checks the form it opens: the input holds name, has the
// focus with all its text selected and a label; Save submits; Cancel is there.
func (b *browser) openRename(rowSel, kind, name string) {
	b.t.Helper()
	b.click(rowSel + " button." + kind + "-rename")
	input := rowSel + " input." + kind + "-rename-input"
	b.waitFor("the "+kind+" rename form", shownJS(input))
	f := eval[renameForm](b, `(() => {
		const row = document.querySelector(`+js(rowSel)+`);
		const i = row.querySelector(`+js("input."+kind+"-rename-input")+`);
		const save = row.querySelector(`+js("button."+kind+"-rename-save")+`);
		const cancel = row.querySelector(`+js("button."+kind+"-rename-cancel")+`);
		return {
			value: i.value,
			focused: document.activeElement === i,
			allChosen: i.selectionStart === 0 && i.selectionEnd === i.value.length,
			label: (i.getAttribute("aria-label") || Array.from(i.labels || []).map(l => l.textContent).join(" ")).trim(),
			saveText: save ? save.textContent.trim() : "<missing>",
			saveType: save ? save.type : "",
			cancelText: cancel ? cancel.textContent.trim() : "<missing>",
		};
	})()`)
	if f.Value != name {
		b.t.Errorf("input.%s-rename-input holds %q, want the current name %q", kind, f.Value, name)
	}
	if !f.Focused || !f.AllChosen {
		b.t.Errorf("input.%s-rename-input: focused %v, text selected %v; want both", kind, f.Focused, f.AllChosen)
	}
	if f.Label == "" {
		b.t.Errorf("input.%s-rename-input has no label or aria-label", kind)
	}
	if f.SaveText != "Save" || f.SaveType != "submit" {
		b.t.Errorf("button.%s-rename-save = %q (type %q), want Save (submit)", kind, f.SaveText, f.SaveType)
	}
	if f.CancelText != "Cancel" {
		b.t.Errorf("button.%s-rename-cancel = %q, want Cancel", kind, f.CancelText)
	}
}

// setup is the common start: server, one user, browser.
func setup(t *testing.T, configure ...func(*config.Config)) (*env, *browser, *store.User) {
	t.Helper()
	e := newEnv(t, configure...)
	u := e.addUser(adaEmail, adaPassword)
	b := newBrowser(t, e)
	return e, b, u
}

const (
	adaEmail    = "ada@example.com"
	adaPassword = "correct horse battery"
)

// folder creates a folder through the API and returns its id.
func (e *env) folder(token, name string) string {
	e.t.Helper()
	status, body := e.api(http.MethodPost, "/v1/folders", token, map[string]string{"name": name})
	id, _ := body["id"].(string)
	if status != http.StatusCreated || id == "" {
		e.t.Fatalf("create folder %s: %d %v", name, status, body)
	}
	return id
}
