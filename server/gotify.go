package server

import (
	"encoding/json"
	"errors"
	"hash/fnv"
	"io"
	"mime"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/heraldhq/herald/ntfy"
	"github.com/heraldhq/herald/service"
	"github.com/heraldhq/herald/store"
)

// Gotify's publish front door (docs/ntfy-and-gotify.md): POST /message with a
// channel's webhook token as the application token. The message goes
// through the same rules, limits and rate limit as POST /v1/send/<token>.

// gotifyIn is a Gotify message as sent: JSON, form or query.
type gotifyIn struct {
	Message  *string        `json:"message"`
	Title    string         `json:"title"`
	Priority *gotifyNumber  `json:"priority"`
	Extras   map[string]any `json:"extras"`
}

// gotifyNumber is Gotify's priority: a JSON number (an integer), or a
// string of one, which some senders send.
type gotifyNumber int

func (n *gotifyNumber) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	v, err := strconv.Atoi(s)
	if err != nil {
		return errors.New("priority must be a whole number")
	}
	*n = gotifyNumber(v)
	return nil
}

// gotifyOut is Gotify's message as it answers a send.
type gotifyOut struct {
	ID       uint64         `json:"id"`
	AppID    uint64         `json:"appid"`
	Message  string         `json:"message"`
	Title    string         `json:"title"`
	Priority int            `json:"priority"`
	Extras   map[string]any `json:"extras,omitempty"`
	Date     time.Time      `json:"date"`
}

// handleGotifyMessage is Gotify's POST /message: the token in ?token=,
// X-Gotify-Key or Authorization: Bearer.
func (s *Server) handleGotifyMessage(w http.ResponseWriter, r *http.Request) {
	if err := s.gotifyMessage(w, r); err != nil {
		s.writeGotifyError(w, r, err)
	}
}

func (s *Server) gotifyMessage(w http.ResponseWriter, r *http.Request) error {
	token := gotifyToken(r)
	if token == "" {
		return errInvalidToken("you need to provide a valid access token: the channel's webhook token as ?token=, X-Gotify-Key or Authorization: Bearer")
	}
	ch, err := s.sendTarget(w, r, token)
	if err != nil {
		return err
	}
	in, err := readGotify(r)
	if err != nil {
		return err
	}
	pl, gotifyPriority, err := gotifyPayload(ch, in)
	if err != nil {
		return err
	}
	m, err := s.sendChecked(r, ch, pl, nil)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, gotifyOut{ID: gotifyID(m.ID), AppID: gotifyID(ch.ID), Message: m.Body, Title: m.Title,
		Priority: gotifyPriority, Extras: in.Extras, Date: m.CreatedAt})
	return nil
}

// gotifyToken reads the application token where Gotify looks for it, in
// its order.
func gotifyToken(r *http.Request) string {
	if t := r.URL.Query().Get("token"); t != "" {
		return t
	}
	if t := r.Header.Get("X-Gotify-Key"); t != "" {
		return t
	}
	if scheme, t, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") {
		return strings.TrimSpace(t)
	}
	return ""
}

// readGotify reads the message as Gotify binds it: a JSON body (by its
// Content-Type, or a body that starts with "{" and names none), else form
// fields and query parameters.
func readGotify(r *http.Request) (*gotifyIn, error) {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var in gotifyIn
	if ct == "application/json" || ct == "" && r.ContentLength != 0 {
		body, err := readBody(r)
		if err != nil {
			return nil, bodyError(err)
		}
		if trimmed := strings.TrimSpace(string(body)); ct == "application/json" || strings.HasPrefix(trimmed, "{") {
			if err := json.Unmarshal(body, &in); err != nil {
				return nil, errInvalidJSON("the request body must be Gotify's message JSON, such as "+
					`{"message":"Backup done","title":"NAS","priority":5}: %v`, err)
			}
			return &in, nil
		}
		r.Body = http.NoBody // read already: a body that is not JSON is not Gotify's
	}
	var err error
	if ct == "multipart/form-data" {
		err = r.ParseMultipartForm(maxBody)
	} else {
		err = r.ParseForm()
	}
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, bodyError(err) // over the limit, or cut short
		}
		return nil, errInvalidPayload("the body is not a valid form (%s): %v", ct, err)
	}
	if _, ok := r.Form["message"]; ok {
		m := r.Form.Get("message")
		in.Message = &m
	}
	in.Title = r.Form.Get("title")
	if p := r.Form.Get("priority"); p != "" {
		var n gotifyNumber
		if err := n.UnmarshalJSON([]byte(p)); err != nil {
			return nil, errInvalidPayload("%s", err.Error())
		}
		in.Priority = &n
	}
	return &in, nil
}

// gotifyPayload is the Herald message a Gotify message asks for, and the
// Gotify priority to answer with. Priority 0-3 is low, 4-7 normal and
// 8-10 high (none: normal, answered as 5); the title defaults to the
// channel's name. Of the extras, the Gotify apps' markdown, click URL and
// big image are kept.
func gotifyPayload(ch *store.Channel, in *gotifyIn) (*service.SendPayload, int, error) {
	if in.Message == nil || *in.Message == "" {
		return nil, 0, errInvalidPayload("message is required")
	}
	title := strings.TrimSpace(in.Title)
	if title == "" {
		title = ch.Name
	}
	pl := &service.SendPayload{Title: &title, Body: *in.Message, Priority: "normal"}
	priority := 5
	if in.Priority != nil {
		priority = int(*in.Priority)
		pl.NtfyPriority = ntfy.FromGotify(priority)
		pl.Priority = ntfy.Level(pl.NtfyPriority)
	}
	if display, ok := in.Extras["client::display"].(map[string]any); ok {
		pl.Markdown = display["contentType"] == "text/markdown"
	}
	if n, ok := in.Extras["client::notification"].(map[string]any); ok {
		if click, ok := n["click"].(map[string]any); ok {
			pl.Click, _ = click["url"].(string)
		}
		pl.Attach, _ = n["bigImageUrl"].(string)
	}
	for _, s := range [...]string{pl.Body, title, pl.Click, pl.Attach} {
		if !ntfy.Text(s) {
			return nil, 0, errInvalidPayload("message, title and extras must be UTF-8 text without NUL characters")
		}
	}
	if pl.Attach != "" {
		if err := service.ValidHTTPURL("client::notification.bigImageUrl", pl.Attach); err != nil {
			return nil, 0, err
		}
		// Fetched and kept as the message's picture when it can be; else
		// the link, saying why (service.AttachmentRequest.Lenient).
		pl.Attachment = &service.AttachmentRequest{URL: pl.Attach, Lenient: true}
		pl.Attach = ""
	}
	return pl, priority, nil
}

// gotifyID is a number for Herald's id, as Gotify's clients expect ids to
// be: a stable hash below 2^53, so that JavaScript reads it exactly.
func gotifyID(id string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return h.Sum64() & (1<<53 - 1)
}

// handleGotifyVersion is Gotify's GET /version, which Gotify's apps call
// to check a server's URL.
func (s *Server) handleGotifyVersion(w http.ResponseWriter, r *http.Request) {
	commit, date := buildStamp()
	writeJSON(w, http.StatusOK, map[string]string{"version": s.version, "commit": commit, "buildDate": date})
}

// buildStamp is the commit and time of the build, when the binary knows
// them.
var buildStamp = sync.OnceValues(func() (commit, date string) {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, kv := range info.Settings {
			switch kv.Key {
			case "vcs.revision":
				commit = kv.Value
			case "vcs.time":
				date = kv.Value
			}
		}
	}
	return commit, date
})
