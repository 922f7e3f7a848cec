package service

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/internal/pgtest"
	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/store"
)

// TestCleanName: a file's name is kept without its path, control
// characters or invalid UTF-8, at most MaxAttachmentName characters with
// its extension; a name with nothing left is named after the file's type.
func TestCleanName(t *testing.T) {
	long := strings.Repeat("é", 300) + ".jpg"
	for in, want := range map[string]string{
		"snap.jpg":             "snap.jpg",
		"../../etc/passwd":     "passwd",
		`C:\Users\ann\cam.png`: "cam.png",
		"a\x00b\nc\u202e.txt":  "abc\u202e.txt",
		"bad\xffutf8.txt":      "badutf8.txt",
		"  spaced.pdf  ":       "spaced.pdf",
		"..":                   "",
		"/":                    "",
		"":                     "",
		long:                   strings.Repeat("é", MaxAttachmentName-4) + ".jpg",
	} {
		if got := cleanName(in); got != want {
			t.Errorf("cleanName(%q) = %q, want %q", in, got, want)
		}
	}
	if got := AttachmentName("..", []byte("%PDF-1.4")); got != "attachment.pdf" {
		t.Errorf("a PDF without a name is %q", got)
	}
	if got := AttachmentName("", []byte{0, 1, 2}); got != "attachment" {
		t.Errorf("bytes of no known type without a name are %q", got)
	}
}

// pngSized is a PNG whose header says w×h, with one pixel of data: its
// header decodes, the picture would not.
func pngSized(t *testing.T, w, h uint32) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 1, 1))); err != nil {
		t.Fatal(err)
	}
	data := b.Bytes()
	// The IHDR chunk follows the 8-byte signature: length, "IHDR", width,
	// height, 5 more bytes, then its CRC over type and data.
	binary.BigEndian.PutUint32(data[16:], w)
	binary.BigEndian.PutUint32(data[20:], h)
	binary.BigEndian.PutUint32(data[29:], crc32.ChecksumIEEE(data[12:29]))
	return data
}

// TestPictureBounds: a picture over MaxImagePixels, or with a side over
// MaxImageSide, is kept as a file, no picture, never decoded; so is one whose header does not decode; one
// whose header reads but whose pixels do not is a picture without a
// thumbnail.
func TestPictureBounds(t *testing.T) {
	s := &Service{decodes: make(chan struct{}, 1)}
	for name, c := range map[string]struct {
		data      []byte
		image     bool
		w, h      int
		thumbnail bool
	}{
		"decompression bomb":  {pngSized(t, 10000, 5000), false, 0, 0, false},
		"a bomb's shape":      {pngSized(t, 1, 39_000_000), false, 0, 0, false},
		"wider than any side": {pngSized(t, MaxImageSide+1, 1), false, 0, 0, false},
		"long, broken":        {pngSized(t, MaxImageSide, 600), true, MaxImageSide, 600, false},
		"large, broken":       {pngSized(t, 4000, 3000), true, 4000, 3000, false},
		"header only":         {[]byte("\x89PNG\r\n\x1a\n"), false, 0, 0, false},
		"gif named as a type": {[]byte("GIF89a not really"), false, 0, 0, false},
	} {
		a, thumb := s.describe(&Upload{Name: "x.png", Data: c.data})
		if a.Image != c.image || a.Width != c.w || a.Height != c.h || (thumb != nil) != c.thumbnail || a.Thumbnail != c.thumbnail {
			t.Errorf("%s: image %v %dx%d thumbnail %v, want %v %dx%d %v", name, a.Image, a.Width, a.Height, thumb != nil,
				c.image, c.w, c.h, c.thumbnail)
		}
	}
}

// TestHoldUpload: no more than attachments.max_in_memory files are held
// at once; one that cannot get a place gives up with its context.
func TestHoldUpload(t *testing.T) {
	st, err := store.Open(context.Background(), t.TempDir()+"/herald.db", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a := config.Default().Attachments
	a.MaxInMemory = 2
	s := New(st, Options{Attachments: a})
	r1, err := s.HoldUpload(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r2, err := s.HoldUpload(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.HoldUpload(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("a third hold while two are held: %v, want it to wait until its context ends", err)
	}
	r1()
	r3, err := s.HoldUpload(ctx) // a place is free: taken at once, even with an ended context
	if err != nil {
		t.Errorf("a hold once a place is free: %v", err)
	} else {
		r3()
	}
	r2()
}

// TestAttachmentLinkLife: a signed link lives LinkTTL, never past the
// message's retention, and is refused once expired.
func TestAttachmentLinkLife(t *testing.T) {
	pgtest.ForEachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		clk := testkit.NewClock()
		st, err := store.Open(ctx, dsn, store.Options{Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		owner := &store.User{Email: "ann@example.com", Name: "Ann", Plan: "free"}
		if err := st.CreateUser(ctx, owner); err != nil {
			t.Fatal(err)
		}
		s := New(st, Options{Now: clk.Now, Retention: 2 * time.Hour, Attachments: config.Default().Attachments,
			BaseURL: "https://herald.example.com/"})
		ch := &store.Channel{Name: "gate"}
		if err := s.CreateChannel(ctx, owner, ch); err != nil {
			t.Fatal(err)
		}
		title := "Person at the gate"
		m, err := s.SendWithFile(ctx, ch, &SendPayload{Title: &title, Priority: "normal"}, &Upload{Name: "log.txt", Data: []byte("hello")})
		if err != nil {
			t.Fatal(err)
		}
		x, err := store.DecodeExtras(m.Extras)
		if err != nil || x.Attachment == nil {
			t.Fatalf("extras %s: %v", m.Extras, err)
		}
		link, exp, err := s.AttachmentLink(ctx, m.CreatedAt, x.Attachment, false)
		if err != nil {
			t.Fatal(err)
		}
		if !exp.Equal(m.CreatedAt.Add(2*time.Hour).Truncate(time.Second)) || !strings.HasPrefix(link, "https://herald.example.com/v1/attachments/att_") {
			t.Errorf("link %s expires %v; want on base_url, at the message's end %v", link, exp, m.CreatedAt.Add(2*time.Hour))
		}
		q := link[strings.Index(link, "?")+1:]
		parts := map[string]string{}
		for _, kv := range strings.Split(q, "&") {
			k, v, _ := strings.Cut(kv, "=")
			parts[k] = v
		}
		d, err := s.SignedAttachment(ctx, x.Attachment.ID, false, parts["exp"], parts["sig"])
		if err != nil || string(d.Data) != "hello" || d.Inline() {
			t.Fatalf("signed read: %v", err)
		}
		d.Close()
		clk.Advance(2*time.Hour + time.Second)
		_, err = s.SignedAttachment(ctx, x.Attachment.ID, false, parts["exp"], parts["sig"])
		wantKind(t, err, Forbidden, "not valid")
	})
}

// BenchmarkDescribeCameraJPEG is the cost of checking a camera snapshot
// (1920×1080 JPEG): sniffing, its header, and its thumbnail.
func BenchmarkDescribeCameraJPEG(b *testing.B) {
	img := image.NewRGBA(image.Rect(0, 0, 1920, 1080))
	for y := range 1080 {
		for x := range 1920 {
			img.Pix[(y*1920+x)*4], img.Pix[(y*1920+x)*4+1], img.Pix[(y*1920+x)*4+2], img.Pix[(y*1920+x)*4+3] =
				uint8(x*y), uint8(x), uint8(y), 255
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 85}); err != nil {
		b.Fatal(err)
	}
	s := &Service{decodes: make(chan struct{}, 1)}
	b.SetBytes(int64(buf.Len()))
	for b.Loop() {
		a, thumb := s.describe(&Upload{Name: "snap.jpg", Data: buf.Bytes()})
		if !a.Image || thumb == nil {
			b.Fatal("no thumbnail")
		}
	}
	b.ReportMetric(float64(buf.Len()), "jpeg-bytes")
}

// TestThumbnailOnWhite: a JPEG has no transparency, so a transparent
// picture's thumbnail is on white; an opaque one keeps its colours.
func TestThumbnailOnWhite(t *testing.T) {
	for name, c := range map[string]struct {
		fill color.RGBA
		want uint32 // the thumbnail's red, of 0xffff
	}{"transparent": {color.RGBA{}, 0xffff}, "opaque black": {color.RGBA{A: 255}, 0}} {
		img := image.NewRGBA(image.Rect(0, 0, 1280, 20))
		for i := range img.Pix {
			img.Pix[i] = []uint8{c.fill.R, c.fill.G, c.fill.B, c.fill.A}[i%4]
		}
		got, err := jpeg.Decode(bytes.NewReader(thumbnail(img)))
		if err != nil {
			t.Fatal(err)
		}
		if r, _, _, _ := got.At(320, 5).RGBA(); int(r>>8) < int(c.want>>8)-8 || int(r>>8) > int(c.want>>8)+8 {
			t.Errorf("%s: thumbnail red %#x, want about %#x", name, r, c.want)
		}
		if got.Bounds().Dx() != 640 || got.Bounds().Dy() != 10 {
			t.Errorf("%s: thumbnail %v, want 640×10", name, got.Bounds())
		}
	}
}
