package service

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strconv"
	"time"

	"github.com/heraldhq/herald/store"
)

// Reading an attachment. Whoever may read its message may read it (the
// owner, an approver the message names: MessageFor); anyone else gets
// ErrNotFound, as for one that does not exist. Push services and ntfy
// clients fetch it without credentials, through a signed link: the id,
// the variant (file or thumbnail) and an expiry, with an HMAC-SHA256 over
// them keyed by a secret kept in the settings (so that every replica
// checks what any other signed). A link lives LinkTTL, never past the
// message's retention, and reads nothing once the message is deleted.

// LinkTTL is how long a signed attachment link works.
const LinkTTL = 24 * time.Hour

// attachmentKeySetting names the link key in the settings.
const attachmentKeySetting = "attachment_link_key"

// errBadLink is the one answer to a signed link that does not check out.
var errBadLink = forbidden("this attachment link is not valid: it was altered or has expired; " +
	"open the message in Herald for a new one")

// bigRead is the size over which reading a file takes a place among the
// files in memory (HoldUpload's): a thumbnail or a small file never waits.
const bigRead = 1 << 20

// Download is an attachment with its bytes, to serve.
type Download struct {
	*store.Attachment
	Thumbnail bool   // Data is the thumbnail, a JPEG
	release   func() // gives back the place in memory it took, if any
}

// Close gives back what reading the file held.
func (d *Download) Close() {
	if d.release != nil {
		d.release()
		d.release = nil
	}
}

// ContentType is the type the bytes are served as.
func (d *Download) ContentType() string {
	if d.Thumbnail {
		return "image/jpeg"
	}
	return d.Attachment.ContentType
}

// Inline reports whether the bytes may be shown in the page: one of the
// four picture formats, read as such.
func (d *Download) Inline() bool {
	return d.Thumbnail || d.Image && IsImageType(d.Attachment.ContentType)
}

// AttachmentFor returns attachment id for who to read, with its bytes (its
// thumbnail's when thumbnail is set). Close the Download once served.
func (s *Service) AttachmentFor(ctx context.Context, who *store.User, id string, thumbnail bool) (*Download, error) {
	a, err := s.st.Attachment(ctx, id)
	if err != nil {
		return nil, err
	}
	if _, _, err := s.MessageFor(ctx, who, a.MessageID); err != nil {
		return nil, err
	}
	return s.download(ctx, a, thumbnail)
}

// SignedAttachment is AttachmentFor through a signed link: exp and sig as
// AttachmentLink wrote them. A link that was altered or has expired is
// Forbidden.
func (s *Service) SignedAttachment(ctx context.Context, id string, thumbnail bool, exp, sig string) (*Download, error) {
	at, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || s.now().Unix() > at {
		return nil, errBadLink
	}
	mac, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil {
		return nil, errBadLink
	}
	key, err := s.linkKey(ctx)
	if err != nil {
		return nil, err
	}
	if !hmac.Equal(mac, linkMAC(key, id, thumbnail, at)) {
		return nil, errBadLink
	}
	a, err := s.st.Attachment(ctx, id)
	if err != nil {
		return nil, err
	}
	return s.download(ctx, a, thumbnail)
}

// download reads a's bytes, holding a place in memory for a large file.
func (s *Service) download(ctx context.Context, a *store.Attachment, thumbnail bool) (*Download, error) {
	if thumbnail && !a.Thumbnail {
		return nil, notFound("attachment %s has no thumbnail: fetch it without thumbnail=1", a.ID)
	}
	d := &Download{Attachment: a, Thumbnail: thumbnail}
	if !thumbnail && a.Size > bigRead {
		release, err := s.HoldUpload(ctx)
		if err != nil {
			return nil, err
		}
		d.release = release
	}
	data, err := s.st.AttachmentData(ctx, a.ID, thumbnail)
	if err != nil {
		d.Close()
		return nil, err
	}
	a.Data = data
	return d, nil
}

// AttachmentLink is an absolute URL (on base_url) that reads attachment a
// of the message created at created, or its thumbnail, without
// credentials, until the time it also returns: LinkTTL from now, or the
// message's end under the retention, whichever comes first.
func (s *Service) AttachmentLink(ctx context.Context, created time.Time, a *store.AttachmentInfo, thumbnail bool) (string, time.Time, error) {
	if !a.Stored() {
		return "", time.Time{}, errors.New("service: attachment link: not a stored file")
	}
	key, err := s.linkKey(ctx)
	if err != nil {
		return "", time.Time{}, err
	}
	exp := s.now().Add(LinkTTL)
	if r := s.opts.Retention; r > 0 && created.Add(r).Before(exp) {
		exp = created.Add(r)
	}
	at := exp.Unix()
	link := s.opts.BaseURL + AttachmentPath(a.ID) + "?exp=" + strconv.FormatInt(at, 10)
	if thumbnail {
		link += "&thumbnail=1"
	}
	link += "&sig=" + base64.RawURLEncoding.EncodeToString(linkMAC(key, a.ID, thumbnail, at))
	return link, time.Unix(at, 0), nil
}

// AttachmentPath is where the API serves attachment id to those who may
// read its message.
func AttachmentPath(id string) string { return "/v1/attachments/" + id }

// linkMAC is the HMAC of a signed link: its id, variant and expiry.
func linkMAC(key []byte, id string, thumbnail bool, exp int64) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("herald attachment link\x00"))
	m.Write([]byte(id))
	variant := "\x00file\x00"
	if thumbnail {
		variant = "\x00thumbnail\x00"
	}
	m.Write([]byte(variant))
	m.Write([]byte(strconv.FormatInt(exp, 10)))
	return m.Sum(nil)
}

// linkKey returns the key links are signed with, generating it on first
// use, read once per process.
func (s *Service) linkKey(ctx context.Context) ([]byte, error) {
	if k := s.linkKeyCache.Load(); k != nil {
		return *k, nil
	}
	k, err := s.st.EnsureSetting(ctx, attachmentKeySetting, func() ([]byte, error) {
		k := make([]byte, 32)
		_, err := rand.Read(k)
		return k, err
	})
	if err != nil {
		return nil, err
	}
	s.linkKeyCache.Store(&k)
	return k, nil
}
