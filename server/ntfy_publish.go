package server

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/heraldhq/herald/ntfy"
	"github.com/heraldhq/herald/service"
	"github.com/heraldhq/herald/store"
)

// ntfy's publish front door (docs/ntfy-and-gotify.md). The topic is a
// channel's webhook token: ntfy senders publish to /<token> as they would
// to a topic, and the message goes through the same rules, limits and rate
// limit as POST /v1/send/<token>. A 200 means it is committed.

// emptyMessage is the body of a publish without one, as ntfy names it.
const emptyMessage = "triggered"

// handleNtfyPublish is PUT/POST /<topic>, PUT/POST /<topic>/<sequence id>
// and GET/PUT/POST /<topic>/publish|send|trigger: parameters in headers or
// the query, the message in the body (or the message parameter).
func (s *Server) handleNtfyPublish(w http.ResponseWriter, r *http.Request, topic, sequenceID string) {
	body, release, err := s.readNtfyBody(r)
	if err != nil {
		s.writeNtfyError(w, r, err)
		return
	}
	defer release()
	if err := s.ntfyPublish(w, r, topic, sequenceID, ntfyRequest(r, r.Header), body); err != nil {
		s.writeNtfyError(w, r, err)
	}
}

// handleNtfyPublishJSON is PUT/POST /: ntfy's message JSON, its topic
// (the webhook token) in the body.
func (s *Server) handleNtfyPublishJSON(w http.ResponseWriter, r *http.Request) {
	if err := s.ntfyPublishJSON(w, r); err != nil {
		s.writeNtfyError(w, r, err)
	}
}

func (s *Server) ntfyPublishJSON(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(r)
	if err != nil {
		return bodyError(err)
	}
	j, err := ntfy.DecodePublishJSON(body)
	if err != nil {
		return err
	}
	req, message, err := j.Request(r.Header)
	if err != nil {
		return err
	}
	req.Query = ntfyRequest(r, nil).Query
	return s.ntfyPublish(w, r, j.Topic, "", req, []byte(message))
}

// ntfyRequest is where r's parameters are read from: header h and r's
// query.
func ntfyRequest(r *http.Request, h http.Header) ntfy.Request {
	req := ntfy.Request{Header: h}
	if r.URL.RawQuery != "" {
		req.Query = r.URL.Query()
	}
	return req
}

// ntfyPublish sends the message req and body describe to the channel whose
// webhook token is topic, and answers with ntfy's message object.
func (s *Server) ntfyPublish(w http.ResponseWriter, r *http.Request, topic, sequenceID string, req ntfy.Request, body []byte) error {
	ch, err := s.sendTarget(w, r, topic)
	if err != nil {
		return err
	}
	p, err := ntfy.ReadPublish(req, s.now())
	if err != nil {
		return err
	}
	if sequenceID != "" {
		p.SequenceID = sequenceID // the path's, as ntfy takes it
	}
	pl, up, err := ntfyPayload(ch, p, body, s.uploadLimit > 0)
	if err != nil {
		return err
	}
	m, err := s.sendChecked(r, ch, pl, up)
	if err != nil {
		return err
	}
	a := ntfyAnswer(m, topic, p, pl)
	if pl.Extras.Attachment != nil {
		a.Attachment = s.ntfyAttachment(r.Context(), m, pl.Extras.Attachment, pl.Attach)
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

// sendChecked validates a front door's message by the rules of every send
// (service.CheckSend) and stores it in ch, as handleSend does, with up,
// the file sent with it, when not nil.
func (s *Server) sendChecked(r *http.Request, ch *store.Channel, pl *service.SendPayload, up *service.Upload) (*store.Message, error) {
	if err := service.CheckSend(pl); err != nil {
		return nil, err
	}
	var m *store.Message
	var err error
	if up != nil {
		m, err = s.svc.SendWithFile(r.Context(), ch, pl, up)
	} else {
		m, err = s.svc.Send(r.Context(), ch, pl)
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, errInvalidToken("no channel has this webhook token") // deleted meanwhile
	}
	return m, err
}

// ntfyPayload is the Herald message an ntfy publish asks for: the body is
// the message (else the message parameter, else "triggered"), the title
// defaults to the channel's name, tags that are emoji short codes become
// emoji, and view and http actions become url and http actions.
//
// As ntfy: with a file name (Filename, ?filename=), or without an attach
// URL and with a body that is not text or is text longer than a message
// may be (service.MaxBodyChars characters once trimmed), the body is a
// file (up), named "attachment" and its type's extension when it has no
// name ("attachment.txt" for text), and the message is the message
// parameter, else "You received a file: NAME". files is false while
// attachments are off: a text body too long for a message is then
// refused, naming the limit. With an attach URL, the body is the message,
// and the file at the URL is fetched and kept (else the URL stays a link).
func ntfyPayload(ch *store.Channel, p *ntfy.Publish, body []byte, files bool) (*service.SendPayload, *service.Upload, error) {
	var up *service.Upload
	message := p.Message
	binary := !utf8.Valid(body) || bytes.IndexByte(body, 0) >= 0
	long := 0 // the characters of a text body too long for a message
	if !binary && len(body) > service.MaxBodyChars {
		if n := utf8.RuneCount(bytes.TrimSpace(body)); n > service.MaxBodyChars {
			long = n
		}
	}
	switch {
	case p.Attach == "" && long > 0 && p.Filename == "" && !files:
		return nil, nil, &ntfy.ParamError{Code: ntfy.CodeBadRequest, Msg: fmt.Sprintf(
			"the body is %d characters, and a message may have at most %d; a longer body is kept as a file, "+
				"and this server takes no files (attachments.enabled = false): send a shorter message", long, service.MaxBodyChars)}
	case p.Attach == "" && (p.Filename != "" || binary || long > 0):
		up = &service.Upload{Name: service.AttachmentName(p.Filename, body), Data: body}
		if message == "" {
			message = "You received a file: " + up.Name
		}
	case binary:
		return nil, nil, &ntfy.ParamError{Code: ntfy.CodeMessageNotUTF8,
			Msg: "the body must be UTF-8 text when attach (X-Attach) names the file; to send the file itself, give it a Filename"}
	case len(body) > 0:
		message = strings.TrimSpace(string(body)) // as ntfy: a body wins over the message parameter
	}
	if message == "" {
		message = emptyMessage
	}
	title := p.Title
	if title == "" {
		title = ch.Name
	}
	actions, err := heraldActions(p.Actions)
	if err != nil {
		return nil, nil, err
	}
	pl := &service.SendPayload{
		Title: &title, Body: message, Priority: ntfy.Level(p.Priority), Actions: actions,
		Extras: service.Extras{
			Tags: ntfy.EmojiTags(p.Tags), Click: p.Click, Icon: p.Icon, Markdown: p.Markdown,
			SequenceID: p.SequenceID, NtfyPriority: p.Priority,
		},
		DeliverAt: p.Delay, Ephemeral: p.NoCache, NoPush: p.NoFirebase,
	}
	if p.Attach != "" {
		// Fetched and kept, named by Filename, when it can be; else the
		// link, as ntfy keeps it, saying why (service.AttachmentRequest).
		pl.Attachment = &service.AttachmentRequest{URL: p.Attach, Name: p.Filename, Lenient: true}
	}
	return pl, up, nil
}

// heraldActions turns ntfy's actions into Herald's: view opens its URL (a
// url action); http makes its request when tapped (an http action).
// broadcast, an Android intent, is refused; copy is left out (Herald's
// apps have no copy button), and the answer's actions say so by its
// absence.
func heraldActions(in []ntfy.Action) ([]service.Action, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := make([]service.Action, 0, len(in))
	for i, a := range in {
		switch a.Action {
		case ntfy.ActionView:
			out = append(out, service.Action{Type: "url", Label: a.Label, Value: a.URL})
		case ntfy.ActionHTTP:
			out = append(out, service.Action{Type: "http", Label: a.Label, Value: a.URL,
				Request: &service.HTTPRequest{Method: a.Method, Headers: a.Headers, Body: a.Body}})
		case ntfy.ActionBroadcast:
			return nil, &ntfy.ParamError{Code: ntfy.CodeActionsInvalid,
				Msg: "actions[" + strconv.Itoa(i) + "]: Herald does not send Android broadcast intents; use a view or http action"}
		}
	}
	return out, nil
}

// ntfyAnswer is ntfy's message object for m, sent to topic as p asked.
func ntfyAnswer(m *store.Message, topic string, p *ntfy.Publish, pl *service.SendPayload) *ntfy.Message {
	at := m.CreatedAt
	if pl.DeliverAt != nil {
		at = *pl.DeliverAt
	}
	a := &ntfy.Message{
		ID: m.ID, SequenceID: p.SequenceID, Time: at.Unix(), Event: ntfy.EventMessage, Topic: topic,
		Title: m.Title, Message: pl.Body, Priority: p.Priority, Tags: p.Tags, Click: p.Click, Icon: p.Icon,
	}
	if p.Markdown {
		a.ContentType = "text/markdown"
	}
	if p.Attach != "" {
		a.Attachment = &ntfy.Attachment{Name: attachmentName(p.Attach), URL: p.Attach}
	}
	for i, act := range p.Actions {
		if act.Action == ntfy.ActionCopy {
			continue // not sent
		}
		act.ID = "a" + strconv.Itoa(i+1)
		a.Actions = append(a.Actions, act)
	}
	return a
}

// attachmentName is the file name ntfy gives an attachment by URL: the
// last segment of its path, else "attachment".
func attachmentName(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		if name := path.Base(u.Path); name != "." && name != "/" && name != "" {
			return name
		}
	}
	return "attachment"
}
