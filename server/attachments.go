package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/heraldhq/herald/ntfy"
	"github.com/heraldhq/herald/service"
	"github.com/heraldhq/herald/store"
)

// Files sent with a message (docs/sending.md): POST /v1/send/{token} as
// multipart/form-data (part payload, the JSON message; part file, the
// file), and ntfy's publish to a topic, whose body may be a file (one with
// a Filename, one that is not text, or text too long for a message).
// Those requests may be max_file_size + uploadOverhead bytes long; every
// other request keeps the limit of maxBody.

// uploadOverhead is what a send with a file may carry beside the file: its
// JSON and the multipart framing.
const uploadOverhead = 64 << 10

// Parts of a multipart send.
const (
	partPayload = "payload"
	partFile    = "file"
)

// bodyLimit is the body limit of r: maxBody, or for a request that may
// carry a file, the upload limit. It reads only r's method, path and
// headers, and allocates nothing.
func (s *Server) bodyLimit(r *http.Request) int64 {
	if s.uploadLimit == 0 || (r.Method != http.MethodPost && r.Method != http.MethodPut) {
		return maxBody
	}
	p := r.URL.Path
	if strings.HasPrefix(p, "/v1/send/") {
		if isMultipart(r) {
			return s.uploadLimit
		}
		return maxBody
	}
	if ntfyTopicPath(p) {
		return s.uploadLimit
	}
	return maxBody
}

// isMultipart reports whether r's body is multipart/form-data.
func isMultipart(r *http.Request) bool {
	ct := r.Header["Content-Type"]
	return len(ct) == 1 && len(ct[0]) >= 19 && strings.EqualFold(ct[0][:19], "multipart/form-data")
}

// ntfyTopicPath reports whether a request to path may be an ntfy publish
// to a topic, and so carry a file: not the JSON publish to /, nor Herald's
// own API, nor Gotify's /message.
func ntfyTopicPath(path string) bool {
	return len(path) >= 2 && !strings.HasPrefix(path, "/v1/") && !strings.HasPrefix(path, "/auth/") && path != "/message"
}

// readNtfyBody reads an ntfy publish's body, which may be a file up to the
// upload limit (r.Body is a MaxBytesReader of bodyLimit). One of up to
// maxBody is read as any body is; a larger one holds one of the places for
// a file in memory once more than that has arrived (service.ReadHeld), so
// that neither a small publish nor a slow sender's holds one. release
// gives the place back; it is never nil. err is HoldUpload's, or
// bodyError's.
func (s *Server) readNtfyBody(r *http.Request) (body []byte, release func(), err error) {
	n := r.ContentLength
	if s.uploadLimit == 0 || (n >= 0 && n <= maxBody) {
		if body, err = readBody(r); err != nil {
			return nil, nil, bodyError(err)
		}
		return body, noRelease, nil
	}
	if n > s.uploadLimit {
		return nil, nil, &http.MaxBytesError{Limit: s.uploadLimit} // outer refuses it first
	}
	body, release, err = s.svc.ReadHeld(r.Context(), r.Body, s.uploadLimit, n)
	if err != nil {
		if r.Context().Err() != nil {
			return nil, nil, err
		}
		return nil, nil, bodyError(err)
	}
	if int64(len(body)) > s.uploadLimit {
		release()
		return nil, nil, &http.MaxBytesError{Limit: s.uploadLimit}
	}
	return body, release, nil
}

// noRelease is the release of a body read without a place in memory.
func noRelease() {}

// sendMultipart is handleSend for a multipart body: the payload part read
// as the JSON body would be, the file part kept with the message.
func (s *Server) sendMultipart(w http.ResponseWriter, r *http.Request, ch *store.Channel) error {
	payload, up, release, err := s.readParts(r)
	if err != nil {
		return err
	}
	defer release()
	if payload == nil {
		return errInvalidPayload("a multipart send needs a %q part: the JSON message, as the JSON body would be", partPayload)
	}
	pl, err := parseSend(payload)
	if err != nil {
		return err
	}
	if up == nil {
		return s.deliverMessage(w, r, ch, pl)
	}
	m, err := s.svc.SendWithFile(r.Context(), ch, pl, up)
	if errors.Is(err, store.ErrNotFound) {
		return errInvalidToken("no channel has this webhook token") // deleted meanwhile
	} else if err != nil {
		return err
	}
	writeRawJSON(w, http.StatusOK, sendResult{OK: true, ID: m.ID, Muted: m.Muted}.appendJSON(make([]byte, 0, 64)))
	return nil
}

// readParts reads a multipart send: its payload (nil when absent) and its
// file (nil when absent). Any other part, or a part twice, is refused. A
// large file holds a place in memory (service.ReadHeld) until release,
// which is never nil; a small one, or one still arriving slowly, none.
func (s *Server) readParts(r *http.Request) (payload []byte, up *service.Upload, release func(), err error) {
	release = noRelease
	fail := func(err error) ([]byte, *service.Upload, func(), error) {
		release()
		return nil, nil, noRelease, err
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return fail(errInvalidPayload("the multipart body cannot be read: %v", err))
	}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return payload, up, release, nil
		}
		if err != nil {
			return fail(partError(err))
		}
		switch name := part.FormName(); {
		case name == partPayload && payload == nil:
			if payload, err = io.ReadAll(io.LimitReader(part, maxBody+1)); err != nil {
				return fail(partError(err))
			}
			if len(payload) > maxBody {
				return fail(errInvalidPayload("the %q part is larger than 1 MiB", partPayload))
			}
		case name == partFile && up == nil:
			limit := s.cfg.Attachments.MaxFileSize.Bytes()
			data, held, err := s.svc.ReadHeld(r.Context(), part, limit, r.ContentLength)
			release = held
			if err != nil {
				return fail(partError(err))
			}
			if int64(len(data)) > limit {
				return fail(service.TooBig(limit))
			}
			up = &service.Upload{Name: part.FileName(), Data: data}
		case name == partPayload || name == partFile:
			return fail(errInvalidPayload("the %q part is sent twice: a send carries one message and at most one file", name))
		default:
			return fail(errInvalidPayload("unknown part %q: a multipart send takes the parts %q (the JSON message) and %q (the file)",
				name, partPayload, partFile))
		}
	}
}

// partError is the error of a multipart body that could not be read.
func partError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return err
	}
	return errInvalidPayload("the multipart body cannot be read: %v", err)
}

// handleAttachment is GET /v1/attachments/{id}: the file, or its
// thumbnail with ?thumbnail=1, for whoever may read its message, or
// through a signed link (?exp=&sig=, which needs no credential).
func (s *Server) handleAttachment(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	q := r.URL.Query()
	id := p.ByName("id")
	thumb := q.Get("thumbnail") == "1" || q.Get("thumbnail") == "true"
	var d *service.Download
	var err error
	if q.Has("sig") || q.Has("exp") {
		d, err = s.svc.SignedAttachment(r.Context(), id, thumb, q.Get("exp"), q.Get("sig"))
	} else {
		var who *principal
		if who, err = s.authenticate(r); err != nil {
			return err
		}
		// A page of pictures reads many: a bucket of its own, roomier than
		// the API's.
		if err := s.rateLimit(w, r, "attachments|"+who.user.ID, 10*s.cfg.Plans.Limits(who.user.Plan).APIPerMinute); err != nil {
			return err
		}
		d, err = s.svc.AttachmentFor(r.Context(), who.user, id, thumb)
	}
	if err != nil {
		return err
	}
	defer d.Close()
	serveDownload(w, r, d)
	return nil
}

// serveDownload answers with d's bytes, ranges and conditional requests
// included (http.ServeContent). Its type is the sniffed one, never
// sniffed again by the browser; only a picture is shown inline, anything
// else downloads, and nothing it holds may run (a sandbox without
// sources).
func serveDownload(w http.ResponseWriter, r *http.Request, d *service.Download) {
	h := w.Header()
	h.Set("Content-Type", d.ContentType())
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	h.Set("Cache-Control", "private, max-age=3600")
	variant := "file"
	if d.Thumbnail {
		variant = "thumbnail"
	}
	h.Set("ETag", `"`+d.ID+"-"+variant+`"`)
	if d.Inline() {
		h.Set("Content-Disposition", "inline")
	} else {
		h.Set("Content-Disposition", "attachment; filename*=UTF-8''"+encodeRFC5987(d.Name))
	}
	http.ServeContent(&rangeRefusal{ResponseWriter: w, size: len(d.Data)}, r, "", d.CreatedAt, bytes.NewReader(d.Data))
}

// rangeRefusal answers http.ServeContent's 416 (a Range outside the file)
// in the API's error shape instead of its plain text.
type rangeRefusal struct {
	http.ResponseWriter
	size    int
	refused bool
}

func (w *rangeRefusal) WriteHeader(code int) {
	if code != http.StatusRequestedRangeNotSatisfiable {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	w.refused = true
	h := w.Header()
	h.Del("Content-Disposition")
	h.Set("Content-Type", "application/json")
	w.ResponseWriter.WriteHeader(code)
	_ = json.NewEncoder(w.ResponseWriter).Encode(map[string]string{"error": "range_not_satisfiable",
		"message": fmt.Sprintf("the Range asked for is not within the file's %d bytes", w.size)})
}

func (w *rangeRefusal) Write(b []byte) (int, error) {
	if w.refused {
		return len(b), nil // ServeContent's own text: answered above
	}
	return w.ResponseWriter.Write(b)
}

// encodeRFC5987 percent-encodes s for a filename* parameter: every byte
// but RFC 5987's attr-chars.
func encodeRFC5987(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$&+-.^_`|~", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// ntfyAttachment is ntfy's attachment object for a's stored file, with a
// signed link to it, or for a link (url), as ntfy shows one; nil for
// neither.
func (s *Server) ntfyAttachment(ctx context.Context, m *store.Message, a *store.AttachmentInfo, link string) *ntfy.Attachment {
	if a.Stored() {
		u, exp, err := s.svc.AttachmentLink(ctx, m.CreatedAt, a, false)
		if err != nil {
			s.log.Warn("ntfy: attachment link", "message_id", m.ID, "err", err)
			return nil
		}
		return &ntfy.Attachment{Name: a.Name, Type: mimeBase(a.ContentType), Size: a.Size, Expires: exp.Unix(), URL: u}
	}
	if link == "" {
		return nil
	}
	return &ntfy.Attachment{Name: attachmentName(link), URL: link}
}

// mimeBase is a content type without its parameters.
func mimeBase(ct string) string {
	if base, _, err := mime.ParseMediaType(ct); err == nil {
		return base
	}
	return ct
}
