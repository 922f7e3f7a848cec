package service

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/store"
)

// Files and pictures sent with a message (docs/sending.md). A send carries
// at most one: uploaded with it (a multipart send, ntfy's upload), or named
// by URL in its JSON and fetched at send time. Either way the bytes are
// checked here, stored in the same commit as the message, and served only
// to those who may read the message (or through a signed link, for push
// services and ntfy clients).

// Limits of an attachment.
const (
	// MaxAttachmentName is the longest file name kept, in characters.
	MaxAttachmentName = 255
	// MaxImagePixels bounds the pictures shown inline and thumbnailed: a
	// larger one (a decompression bomb, or just huge) is kept as a file.
	MaxImagePixels = 40_000_000
	// MaxImageSide bounds each side of such a picture: JPEG's and WebP's
	// largest. Within MaxImagePixels, a PNG one pixel wide and millions
	// long took gigabytes to thumbnail (x/image/draw's scaler grows with
	// the longest side); at this bound, about 170 MB, as any 40 MP picture.
	MaxImageSide = 65535
)

// Upload is a file sent with a message.
type Upload struct {
	Name string // as the sender named it; cleaned before it is kept
	Data []byte
}

// AttachmentRequest is a send's "attachment": a file to fetch from URL at
// send time, kept under Name (else the URL's last segment).
type AttachmentRequest struct {
	URL  string `json:"url"`
	Name string `json:"name,omitempty"`
	// Lenient is a link given through ntfy's attach or Gotify's
	// bigImageUrl: fetched and kept like any other when it can be, and
	// otherwise sent as the link it is, saying why it was not fetched
	// (ntfy and Gotify take any link), instead of refused.
	Lenient bool `json:"-"`
}

// checkAttachmentRequest validates a send's "attachment".
func checkAttachmentRequest(p *SendPayload) error {
	a := p.Attachment
	if a == nil {
		return nil
	}
	if a.URL == "" {
		return invalid("attachment.url is required: the address of the file to attach")
	}
	if err := ValidHTTPURL("attachment.url", a.URL); err != nil {
		return err
	}
	if chars(a.Name) > MaxAttachmentName || hasControl(a.Name) {
		return invalid("attachment.name must be at most %d characters, without control characters", MaxAttachmentName)
	}
	if p.Attach != "" {
		return invalid("attachment and attach_url both name a file: send one (attachment is fetched and kept, attach_url stays a link)")
	}
	return nil
}

// attachmentsOff is the refusal of a file while attachments.enabled is false.
func attachmentsOff() error {
	return invalid("this server takes no attachments (attachments.enabled = false): send the message without a file")
}

// SendWithFile is Send for a message that carries up, the file sent with
// it: checked, sniffed, thumbnailed when it is a large picture, and stored
// with the message in one commit, within the channel owner's quota. The
// caller holds an upload slot (HoldUpload) while up is in memory.
func (s *Service) SendWithFile(ctx context.Context, ch *store.Channel, p *SendPayload, up *Upload) (*store.Message, error) {
	if !s.opts.Attachments.Enabled {
		return nil, attachmentsOff()
	}
	if p.Attachment != nil {
		return nil, invalid("a file was sent, and attachment names another: send one")
	}
	if p.Attach != "" {
		return nil, invalid("a file was sent, and attach_url names another: send one (a message carries one file or link)")
	}
	return s.sendFile(ctx, ch, p, up)
}

// sendFile stores the message p with the file up.
func (s *Service) sendFile(ctx context.Context, ch *store.Channel, p *SendPayload, up *Upload) (*store.Message, error) {
	if max := s.opts.Attachments.MaxFileSize.Bytes(); int64(len(up.Data)) > max {
		return nil, TooBig(max)
	}
	if len(up.Data) == 0 {
		return nil, invalid("the file is empty")
	}
	m, err := s.prepareSend(ch, p)
	if err != nil {
		return nil, err
	}
	owner, err := s.st.UserByID(ctx, ch.UserID)
	if err != nil {
		return nil, err
	}
	a, thumb := s.describe(up)
	a.UserID = owner.ID
	p.Extras.Attachment = &a.AttachmentInfo
	if m.Extras, err = store.EncodeExtras(&p.Extras); err != nil {
		return nil, err
	}
	quota := s.Limits(owner.Plan).AttachmentQuota.Bytes()
	err = s.st.CreateMessageWithAttachment(ctx, m, a, thumb, quota)
	var qe *store.QuotaError
	if errors.As(err, &qe) {
		return nil, &Error{Kind: TooLarge, Code: "attachment_quota", Message: fmt.Sprintf(
			"this file (%s) would take the channel owner's attachments over %s, the quota of their plan (%s), "+
				"with %s kept; delete messages with files, or wait for older ones to expire",
			byteSize(qe.Size), byteSize(qe.Max), config.EffectivePlan(owner.Plan), byteSize(qe.Have))}
	}
	if err != nil {
		return nil, err
	}
	return m, nil
}

// TooBig is the refusal of a file larger than max bytes
// (attachments.max_file_size).
func TooBig(max int64) error {
	return &Error{Kind: TooLarge, Code: "payload_too_large", Message: fmt.Sprintf(
		"the file is larger than %s, the largest this server keeps (attachments.max_file_size)", byteSize(max))}
}

// describe is the attachment up makes: a new id, its cleaned name, the
// content type sniffed from its bytes, and for a picture its size and,
// when it is large, a thumbnail.
func (s *Service) describe(up *Upload) (*store.Attachment, []byte) {
	ct := sniff(up.Data)
	a := &store.Attachment{AttachmentInfo: store.AttachmentInfo{ID: store.NewAttachmentID(), ContentType: ct,
		Size: int64(len(up.Data))}, Data: up.Data}
	var thumb []byte
	if img, ok := s.picture(up.Data, ct); ok {
		a.Image, a.Width, a.Height = true, img.width, img.height
		thumb = img.thumbnail
		a.Thumbnail = thumb != nil
	}
	a.Name = AttachmentName(up.Name, up.Data)
	return a, thumb
}

// AttachmentName is the name a file sent as name is kept under: name
// cleaned (cleanName), else "attachment" and the extension of the type
// its bytes are, as ntfy names a file sent without one.
func AttachmentName(name string, data []byte) string {
	if n := cleanName(name); n != "" {
		return n
	}
	return "attachment" + extension(sniff(data))
}

// cleanName is a file name as it is kept: its last path segment (a
// sender's "../../etc/passwd" is "passwd"), valid UTF-8 without control
// characters, at most MaxAttachmentName characters with its extension
// kept. "" when nothing is left.
func cleanName(name string) string {
	name = strings.ToValidUTF8(name, "")
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u2028' || r == '\u2029' {
			return -1
		}
		return r
	}, name)
	name = path.Base(strings.ReplaceAll(name, `\`, "/"))
	name = strings.TrimSpace(name)
	if name == "." || name == ".." || name == "/" {
		return ""
	}
	if utf8.RuneCountInString(name) > MaxAttachmentName {
		ext := path.Ext(name)
		if utf8.RuneCountInString(ext) > 16 {
			ext = ""
		}
		r := []rune(strings.TrimSuffix(name, ext))
		name = string(r[:MaxAttachmentName-utf8.RuneCountInString(ext)]) + ext
	}
	return name
}

// nameFromURL is the name of a file fetched from raw: its path's last
// segment, unescaped, else "".
func nameFromURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return cleanName(path.Base(u.Path))
}

// byteSize writes n bytes for people: 15 MB, 512 KB, 900 bytes.
func byteSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GB", n>>30)
	case n >= 1<<20:
		return trimZero(fmt.Sprintf("%.1f MB", float64(n)/(1<<20)))
	case n >= 1<<10:
		return trimZero(fmt.Sprintf("%.1f KB", float64(n)/(1<<10)))
	}
	return fmt.Sprintf("%d bytes", n)
}

func trimZero(s string) string { return strings.Replace(s, ".0 ", " ", 1) }
