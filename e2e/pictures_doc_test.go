package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/heraldhq/herald/internal/testkit"
)

// picturesDoc returns the fenced blocks of docs/pictures.md in language
// lang, in order.
func picturesDoc(t *testing.T, lang string) []string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(root, "docs/pictures.md"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for _, m := range regexp.MustCompile("(?s)```"+lang+"\n(.*?)```").FindAllSubmatch(doc, -1) {
		blocks = append(blocks, string(m[1]))
	}
	return blocks
}

// replaceOnce replaces old, which must be in s exactly once, so that the
// docs cannot drift from what the test runs.
func replaceOnce(t *testing.T, s, old, new string) string {
	t.Helper()
	if strings.Count(s, old) != 1 {
		t.Fatalf("the example should hold %q once:\n%s", old, s)
	}
	return strings.Replace(s, old, new, 1)
}

// snapshot is a 1280×720 JPEG with noise, as a camera's: large enough to
// get a thumbnail.
func snapshot(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 1280, 720))
	seed := uint32(3)
	for y := 0; y < 720; y++ {
		for x := 0; x < 1280; x++ {
			seed = seed*1664525 + 1013904223
			n := uint8(seed >> 26)
			img.SetRGBA(x, y, color.RGBA{uint8(x/8) + n, uint8(y/4) + n, 90 + n, 255})
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 85}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestPicturesDoc runs docs/pictures.md as it is written against herald
// serve: each curl example in sh (a camera and Frigate are local servers),
// and the Home Assistant example's shell command and REST command as Home
// Assistant would run them; then answers the message with Open gate, and
// checks that the callback reaches the webhook the answer's automation
// listens on and meets its conditions.
func TestPicturesDoc(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	for _, tool := range []string{"sh", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("the examples need %s: %v", tool, err)
			}
			t.Skipf("the examples need %s: %v", tool, err)
		}
	}
	pic := snapshot(t)
	cameras := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/gate/snapshot.jpg", "/api/events/1700000000.5-abc123/snapshot.jpg":
			w.Header().Set("Content-Type", "image/jpeg")
			w.Write(pic)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(cameras.Close)
	var mu sync.Mutex
	hooks := map[string][]map[string]any{} // path → callbacks
	ha := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev map[string]any
		_ = json.NewDecoder(r.Body).Decode(&ev)
		mu.Lock()
		hooks[r.URL.Path] = append(hooks[r.URL.Path], ev)
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(ha.Close)

	p := startHerald(t, time.Minute, t.TempDir(), "HERALD_DELIVERY_ALLOW_LOOPBACK=true")
	runHerald(t, p.env, "pictures-password\n", "user", "add", "gate@example.com", "--password-stdin")
	tok := signIn(t, p, "gate@example.com", "pictures-password")
	ch := p.must(t, 201, "POST", "/v1/channels", map[string]string{"name": "Gate"}, tok)
	token := strings.TrimPrefix(ch["webhook_url"].(string), p.base+"/v1/send/")

	dir := t.TempDir()
	log := bytes.Repeat([]byte("backup: 42 files copied\n"), 512)
	for name, data := range map[string][]byte{"gate.jpg": pic, "backup.log": log} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(script string) string {
		t.Helper()
		cmd := exec.Command("sh", "-c", script)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HERALD="+p.base, "TOKEN="+token)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v\n%s\noutput: %s", err, script, out)
		}
		return string(out)
	}

	// The curl examples. The first block only names the two variables,
	// which the test sets.
	sh := picturesDoc(t, "sh")
	if len(sh) != 5 || strings.TrimSpace(sh[0]) != "HERALD=https://herald.example\nTOKEN=your-channel-webhook-token" {
		t.Fatalf("docs/pictures.md has %d sh blocks, want the variables and four examples; the first:\n%s", len(sh), sh[0])
	}
	sh[3] = replaceOnce(t, sh[3], "https://cams.example", cameras.URL)
	for i, block := range sh[1:4] {
		var ans map[string]any
		if out := run(block); json.Unmarshal([]byte(out), &ans) != nil || ans["ok"] != true {
			t.Errorf("example %d answered %s, want {\"ok\":true,...}", i+1, out)
		}
	}
	var ntfy struct {
		Message    string `json:"message"`
		Attachment struct {
			Name string `json:"name"`
			Size int    `json:"size"`
			URL  string `json:"url"`
		} `json:"attachment"`
	}
	if out := run(sh[4]); json.Unmarshal([]byte(out), &ntfy) != nil || ntfy.Message != "You received a file: backup.log" ||
		ntfy.Attachment.Name != "backup.log" || ntfy.Attachment.Size != len(log) || !strings.Contains(ntfy.Attachment.URL, "sig=") {
		t.Errorf("the ntfy example answered %s", out)
	}
	// The ntfy app downloads the file from its signed link, with no credential.
	res, err := http.Get(ntfy.Attachment.URL)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !bytes.Equal(got, log) {
		t.Errorf("GET the ntfy attachment's url: %d, %d bytes", res.StatusCode, len(got))
	}

	// Home Assistant: the shell command as its shell runs it.
	yamls := picturesDoc(t, "yaml")
	var conf struct {
		ShellCommand map[string]string `yaml:"shell_command"`
		RestCommand  map[string]struct {
			URL         string `yaml:"url"`
			Method      string `yaml:"method"`
			ContentType string `yaml:"content_type"`
			Payload     string `yaml:"payload"`
		} `yaml:"rest_command"`
		Automation []struct {
			Trigger []struct {
				Platform  string `yaml:"platform"`
				WebhookID string `yaml:"webhook_id"`
			} `yaml:"trigger"`
			Condition []string `yaml:"condition"`
		} `yaml:"automation"`
	}
	var answer []string
	webhook := ""
	for _, y := range yamls {
		if err := yaml.Unmarshal([]byte(y), &conf); err != nil {
			t.Fatalf("a yaml block does not parse: %v\n%s", err, y)
		}
		for _, a := range conf.Automation {
			if len(a.Trigger) == 1 && a.Trigger[0].Platform == "webhook" {
				webhook, answer = a.Trigger[0].WebhookID, a.Condition
			}
		}
	}
	haURL := "http://homeassistant.lan:8123"
	cmd := conf.ShellCommand["herald_gate"]
	cmd = replaceOnce(t, cmd, "https://herald.example/v1/send/your-channel-webhook-token", p.base+"/v1/send/"+token)
	cmd = replaceOnce(t, cmd, haURL, ha.URL)
	cmd = replaceOnce(t, cmd, "/config/www/gate.jpg", filepath.Join(dir, "gate.jpg"))
	run(cmd)

	// The REST command, its template filled in as Home Assistant does.
	rc := conf.RestCommand["herald_gate_event"]
	if rc.Method != "POST" || rc.ContentType != "application/json" {
		t.Fatalf("rest_command %+v", rc)
	}
	body := replaceOnce(t, rc.Payload, "{{ event_id }}", "1700000000.5-abc123")
	body = replaceOnce(t, body, "http://frigate.lan:5000", cameras.URL)
	body = replaceOnce(t, body, haURL, ha.URL)
	url := replaceOnce(t, rc.URL, "https://herald.example", p.base)
	url = replaceOnce(t, url, "your-channel-webhook-token", token)
	res, err = http.Post(url, rc.ContentType, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("the REST command: %d %s", res.StatusCode, raw)
	}

	// Every example stored its file: the pictures with their size, the
	// camera's fetched once each.
	list := p.must(t, 200, "GET", "/v1/messages?limit=10", nil, tok)["messages"].([]any)
	var names []string
	var gate map[string]any
	for _, m := range list {
		m := m.(map[string]any)
		a, _ := m["attachment"].(map[string]any)
		if a == nil {
			t.Errorf("message %q has no attachment", m["title"])
			continue
		}
		names = append(names, a["name"].(string))
		if a["image"] == true && (a["width"] != 1280.0 || a["thumbnail_url"] == nil) {
			t.Errorf("picture %v, want 1280 wide with a thumbnail", a)
		}
		if m["callback_url"] != nil && gate == nil {
			gate = m // the newest with a callback: the REST command's; the shell command's follows
		}
	}
	if got := strings.Join(names, " "); got != "gate.jpg gate.jpg backup.log gate.jpg backup.log gate.jpg" {
		t.Errorf("attachments, newest first: %s", got)
	}

	// Open gate on the shell command's message: the callback reaches the
	// webhook the answer's automation listens on, and meets its conditions.
	var shellMsg string
	for _, m := range list {
		m := m.(map[string]any)
		if m["callback_url"] != nil && m["id"] != gate["id"] {
			shellMsg = m["id"].(string)
		}
	}
	if webhook == "" || shellMsg == "" {
		t.Fatalf("no webhook automation (%q) or no message of the shell command (%q)", webhook, shellMsg)
	}
	p.must(t, 200, "POST", "/v1/messages/"+shellMsg+"/respond", map[string]string{"action": "open"}, tok)
	path := "/api/webhook/" + webhook
	var ev map[string]any
	testkit.Eventually(t, 10*time.Second, func() error {
		mu.Lock()
		defer mu.Unlock()
		if len(hooks[path]) == 0 {
			return errors.New("no callback at " + path)
		}
		ev = hooks[path][0]
		return nil
	})
	conds := regexp.MustCompile(`^\{\{ trigger\.json\.(\w+) == '([^']*)' \}\}$`)
	if len(answer) != 2 {
		t.Fatalf("the answer's automation has conditions %q", answer)
	}
	for _, c := range answer {
		m := conds.FindStringSubmatch(c)
		if m == nil || ev[m[1]] != m[2] {
			t.Errorf("condition %q on the callback %v: not met", c, ev)
		}
	}
	if ev["message_id"] != shellMsg {
		t.Errorf("callback %v, want the answer to %s", ev, shellMsg)
	}
}
