package main

// Uploads: -file makes every request a multipart/form-data send (part
// payload = the JSON, part file = the file), as a camera's snapshot is sent;
// "loadgen -make-jpeg KB FILE" writes a picture of about that size for it.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// uploadRSSMB bounds Herald's peak RSS during an upload run (see
// checkTargets).
const uploadRSSMB = 100

// isUpload reports whether a report's target is an upload run (load.sh's
// IMAGE=1 names them "image N KB"): not compared with the text ceiling.
func isUpload(target string) bool { return strings.HasPrefix(target, "image") }

// multipartBody is the body of an upload: payload as the part named
// "payload", the file at path as the part named "file" with its base name.
func multipartBody(payload []byte, path string) (body []byte, contentType string, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("-file: %w", err)
	}
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="payload"`)
	h.Set("Content-Type", "application/json")
	part, err := w.CreatePart(h)
	if err != nil {
		return nil, "", err
	}
	part.Write(payload)
	h = textproto.MIMEHeader{}
	h.Set("Content-Disposition", mime.FormatMediaType("form-data", map[string]string{"name": "file", "filename": filepath.Base(path)}))
	ct := mime.TypeByExtension(filepath.Ext(path))
	if ct == "" {
		ct = "application/octet-stream"
	}
	h.Set("Content-Type", ct)
	if part, err = w.CreatePart(h); err != nil {
		return nil, "", err
	}
	part.Write(data)
	if err := w.Close(); err != nil {
		return nil, "", err
	}
	return b.Bytes(), w.FormDataContentType(), nil
}

// makeJPEG writes a 1280×720 JPEG of about kb KB to path: a camera
// snapshot's size, bigger than a thumbnail, so that Herald makes one. A
// smooth gradient with noise over it; the quality is the highest that
// stays within the size.
func makeJPEG(args []string) error {
	if len(args) != 2 {
		return errors.New("usage: loadgen -make-jpeg KB FILE")
	}
	kb, err := strconv.Atoi(args[0])
	if err != nil || kb < 20 || kb > 10_000 {
		return fmt.Errorf("-make-jpeg: %q is not a size in KB (20 to 10000)", args[0])
	}
	img := image.NewRGBA(image.Rect(0, 0, 1280, 720))
	seed := uint32(1)
	for y := 0; y < 720; y++ {
		for x := 0; x < 1280; x++ {
			seed = seed*1664525 + 1013904223 // a fixed sequence: the same file every run
			n := int(seed>>24) / 6
			img.SetRGBA(x, y, color.RGBA{uint8(x*200/1280 + n), uint8(y*200/720 + n), uint8(120 + n), 255})
		}
	}
	var best []byte
	for lo, hi := 1, 100; lo <= hi; {
		q := (lo + hi) / 2
		var b bytes.Buffer
		if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: q}); err != nil {
			return err
		}
		if b.Len() <= kb*1024 {
			best, lo = b.Bytes(), q+1
		} else {
			hi = q - 1
		}
	}
	if best == nil {
		return fmt.Errorf("-make-jpeg: no quality makes %d KB or less", kb)
	}
	return os.WriteFile(args[1], best, 0o644)
}

// ceilingUpload is the ceiling's work for an upload: the multipart parts
// read as a minimal upload handler must (the payload decoded, the file held
// in memory), nothing stored.
func ceilingUpload(w http.ResponseWriter, r *http.Request) bool {
	mr, err := r.MultipartReader()
	if err != nil {
		return false
	}
	var p ceilingPayload
	file := 0
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return false
		}
		switch part.FormName() {
		case "payload":
			dec := json.NewDecoder(io.LimitReader(part, 1<<20))
			dec.DisallowUnknownFields()
			if dec.Decode(&p) != nil {
				return false
			}
		case "file":
			data, err := io.ReadAll(io.LimitReader(part, 16<<20))
			if err != nil {
				return false
			}
			file = len(data)
		default:
			return false
		}
	}
	return p.Title != nil && file > 0
}
