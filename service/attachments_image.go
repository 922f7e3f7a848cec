package service

import (
	"bytes"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"net/http"
	"strings"

	"golang.org/x/image/draw"
	"golang.org/x/image/webp"
)

// Pictures. The content type of every file is sniffed from its bytes
// (http.DetectContentType), never taken from the sender, and only PNG,
// JPEG, GIF and WebP whose header also decodes as that format are
// pictures: shown inline, with their size, and thumbnailed when large.
// Anything else (HTML named x.png, SVG, a PDF) is served as a download.

// Thumbnails: a JPEG whose longest side is thumbnailSide pixels, made for
// a picture larger than that or than thumbnailOver bytes, and only when
// it is smaller than the picture itself.
const (
	thumbnailSide    = 640
	thumbnailOver    = 200 << 10
	thumbnailQuality = 80
)

// imageFormats are the pictures shown inline, by sniffed content type,
// with the decoder of each: only these are ever decoded.
var imageFormats = map[string]struct {
	config func([]byte) (image.Config, error)
	decode func([]byte) (image.Image, error)
}{
	"image/png":  {reader(png.DecodeConfig), reader(png.Decode)},
	"image/jpeg": {reader(jpeg.DecodeConfig), reader(jpeg.Decode)},
	"image/gif":  {reader(gif.DecodeConfig), reader(gif.Decode)},
	"image/webp": {reader(webp.DecodeConfig), reader(webp.Decode)},
}

func reader[T any](f func(io.Reader) (T, error)) func([]byte) (T, error) {
	return func(b []byte) (T, error) { return f(bytes.NewReader(b)) }
}

// IsImageType reports whether a sniffed content type is one of the
// pictures shown inline.
func IsImageType(ct string) bool {
	_, ok := imageFormats[ct]
	return ok
}

// sniff is the content type of data as a browser would sniff it.
func sniff(data []byte) string {
	return http.DetectContentType(data)
}

// picture is what a picture's bytes say: its size, and its thumbnail when
// it needs one.
type picture struct {
	width, height int
	thumbnail     []byte
}

// picture reads data of sniffed type ct as a picture: ok is false when it
// is not one of the four formats, its header does not decode as that
// format, or it is larger than MaxImagePixels or MaxImageSide (then it is
// not decoded at all). The whole picture is decoded only to make a thumbnail, one at a
// time (s.decodes), since a decoded picture takes 4 bytes a pixel.
func (s *Service) picture(data []byte, ct string) (picture, bool) {
	f, ok := imageFormats[ct]
	if !ok {
		return picture{}, false
	}
	cfg, err := f.config(data)
	if err != nil || cfg.Width <= 0 || cfg.Height <= 0 || max(cfg.Width, cfg.Height) > MaxImageSide ||
		int64(cfg.Width)*int64(cfg.Height) > MaxImagePixels {
		return picture{}, false
	}
	p := picture{width: cfg.Width, height: cfg.Height}
	if max(cfg.Width, cfg.Height) <= thumbnailSide && len(data) <= thumbnailOver {
		return p, true
	}
	s.decodes <- struct{}{}
	defer func() { <-s.decodes }()
	img, err := f.decode(data)
	if err != nil {
		return p, true // its header reads: shown as it is, without a thumbnail
	}
	if t := thumbnail(img); len(t) < len(data) {
		p.thumbnail = t
	}
	return p, true
}

// thumbnail is img scaled to fit thumbnailSide (never enlarged), on white
// (a JPEG has no transparency), as a JPEG.
func thumbnail(img image.Image) []byte {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if side := max(w, h); side > thumbnailSide {
		w, h = max(1, w*thumbnailSide/side), max(1, h*thumbnailSide/side)
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	op := draw.Src // an opaque picture (every JPEG) is scaled as it is: several times faster than Over
	if o, ok := img.(interface{ Opaque() bool }); !ok || !o.Opaque() {
		draw.Draw(dst, dst.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
		op = draw.Over
	}
	draw.BiLinear.Scale(dst, dst.Bounds(), img, b, op, nil)
	var out bytes.Buffer
	if err := jpeg.Encode(&out, dst, &jpeg.Options{Quality: thumbnailQuality}); err != nil {
		return nil
	}
	return out.Bytes()
}

// extensions name a file of a sniffed type that came without a name.
var extensions = map[string]string{
	"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp", "image/bmp": ".bmp",
	"application/pdf": ".pdf", "application/zip": ".zip", "application/x-gzip": ".gz", "video/mp4": ".mp4",
	"video/webm": ".webm", "audio/mpeg": ".mp3", "audio/wave": ".wav", "application/ogg": ".ogg",
	"text/plain": ".txt", "text/html": ".html", "text/xml": ".xml", "application/json": ".json",
}

// extension is the file extension of content type ct, "" when unknown.
func extension(ct string) string {
	base, _, _ := strings.Cut(ct, ";")
	return extensions[strings.TrimSpace(base)]
}
