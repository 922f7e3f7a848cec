package service

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/heraldhq/herald/netguard"
	"github.com/heraldhq/herald/store"
)

// HoldUpload takes one of the places for a file in memory
// (attachments.max_in_memory), waiting for one until ctx ends; release
// gives it back. Every upload and fetch holds one while its bytes are in
// memory, so that a flood of large sends waits instead of taking the
// server's memory.
func (s *Service) HoldUpload(ctx context.Context) (release func(), err error) {
	select {
	case s.slots <- struct{}{}: // a free place is taken at once
		return func() { <-s.slots }, nil
	default:
	}
	select {
	case s.slots <- struct{}{}:
		return func() { <-s.slots }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// ReadHeld reads r to its end, up to limit+1 bytes (one more tells the
// caller it is over limit). The first bigRead bytes are read without a
// place in memory; past them it waits for one (HoldUpload), held by the
// caller until release, which is never nil. A sender that trickles its
// bytes (or a server a fetch waits on) thus holds no place while it has
// sent little, and every other upload goes on; what it has sent is
// bounded by bigRead. size, when known (else -1), sizes the buffer once.
func (s *Service) ReadHeld(ctx context.Context, r io.Reader, limit, size int64) (data []byte, release func(), err error) {
	release = func() {}
	head, err := io.ReadAll(io.LimitReader(r, min(bigRead, limit+1)))
	if err != nil || int64(len(head)) < min(bigRead, limit+1) {
		return head, release, err // all of it, small
	}
	if release, err = s.HoldUpload(ctx); err != nil {
		return nil, func() {}, err
	}
	buf := bytes.NewBuffer(make([]byte, 0, min(limit+1, max(size, int64(len(head))))))
	buf.Write(head)
	if _, err := buf.ReadFrom(io.LimitReader(r, limit+1-int64(len(head)))); err != nil {
		release()
		return nil, func() {}, err
	}
	return buf.Bytes(), release, nil
}

// sendFetched stores the message p whose "attachment" names a file by URL:
// fetched now and kept (attachments.fetch), or kept as a link. A lenient
// request whose file cannot be fetched or kept goes out as its link.
func (s *Service) sendFetched(ctx context.Context, ch *store.Channel, p *SendPayload) (*store.Message, error) {
	req := p.Attachment
	name := req.Name
	if name == "" {
		name = nameFromURL(req.URL)
	}
	switch {
	case !s.opts.Attachments.Enabled && req.Lenient:
		return s.sendLink(ctx, ch, p, name, "")
	case !s.opts.Attachments.Enabled:
		return nil, attachmentsOff()
	case !s.opts.Attachments.Fetch:
		return s.sendLink(ctx, ch, p, name,
			"not fetched: this server keeps files named by URL as links (attachments.fetch = false)")
	}
	m, err := s.fetchAndSend(ctx, ch, p, name)
	var refused *Error
	if err != nil && req.Lenient && ctx.Err() == nil && errors.As(err, &refused) {
		return s.sendLink(ctx, ch, p, name, notFetched(refused.Message))
	}
	return m, err
}

// fetchAndSend fetches the file of p's attachment and stores p with it.
func (s *Service) fetchAndSend(ctx context.Context, ch *store.Channel, p *SendPayload, name string) (*store.Message, error) {
	if err := s.checkHost("attachment.url", p.Attachment.URL); err != nil {
		return nil, err
	}
	data, release, err := s.fetch(ctx, p.Attachment.URL)
	if err != nil {
		return nil, err
	}
	defer release()
	return s.sendFile(ctx, ch, p, &Upload{Name: name, Data: data})
}

// sendLink stores p with its attachment's URL as a link (attach_url), and,
// when why is not empty, the attachment as one not fetched, for why.
func (s *Service) sendLink(ctx context.Context, ch *store.Channel, p *SendPayload, name, why string) (*store.Message, error) {
	url := p.Attachment.URL
	p.Attachment = nil
	p.Attach = url
	if why != "" {
		p.Extras.Attachment = &store.AttachmentInfo{Name: cleanName(name), URL: url, Error: why}
	}
	return s.Send(ctx, ch, p)
}

// notFetched is the note of a link kept because its file was refused, from
// the refusal's message ("attachment.url: not fetched: ...", "attachment.url
// is refused: ..." or any other).
func notFetched(refusal string) string {
	if rest, ok := strings.CutPrefix(refusal, "attachment.url is refused: "); ok {
		return "not fetched: the address is refused: " + rest
	}
	refusal = strings.TrimPrefix(refusal, "attachment.url: ")
	if strings.HasPrefix(refusal, "not fetched") {
		return refusal
	}
	return "not fetched: " + refusal
}

// fetch GETs raw through the callbacks' address policy, within
// attachments.fetch_timeout, reading at most max_file_size bytes, with a
// place in memory once it is large (ReadHeld), until release. Each
// failure is a refusal that says why.
func (s *Service) fetch(ctx context.Context, raw string) (data []byte, release func(), err error) {
	max := s.opts.Attachments.MaxFileSize.Bytes()
	timeout := s.opts.Attachments.FetchTimeout.Duration
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return nil, nil, invalid("attachment.url: %v", err)
	}
	req.Header.Set("User-Agent", "Herald")
	resp, err := s.fetcher.Do(req)
	if err != nil {
		return nil, nil, s.fetchError(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		hint := ""
		if resp.StatusCode >= 300 && resp.StatusCode < 400 {
			hint = "; redirects are not followed: give the file's final URL"
		}
		return nil, nil, invalid("attachment.url: not fetched: the server answered %s%s", resp.Status, hint)
	}
	if resp.ContentLength > max {
		return nil, nil, fetchTooBig(max)
	}
	data, release, err = s.ReadHeld(ctx, resp.Body, max, resp.ContentLength)
	if err != nil {
		return nil, nil, s.fetchError(ctx, err)
	}
	if int64(len(data)) > max {
		release()
		return nil, nil, fetchTooBig(max)
	}
	return data, release, nil
}

func fetchTooBig(max int64) error {
	return &Error{Kind: TooLarge, Code: "payload_too_large", Message: fmt.Sprintf(
		"attachment.url: not fetched: the file is larger than %s, the largest this server keeps (attachments.max_file_size)",
		byteSize(max))}
}

// fetchError says why a fetch failed: a blocked address, no answer in
// time, or what the network said.
func (s *Service) fetchError(ctx context.Context, err error) error {
	var be *netguard.BlockedError
	if errors.As(err, &be) {
		return invalid("attachment.url is refused: %s", be.Explain("attachment fetches"))
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return invalid("attachment.url: not fetched: the file did not arrive within %s (attachments.fetch_timeout)",
			s.opts.Attachments.FetchTimeout.Duration)
	}
	if ctx.Err() != nil {
		return ctx.Err() // the sender went away
	}
	return invalid("attachment.url: not fetched: %v", err)
}
