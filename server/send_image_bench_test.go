package server

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"mime/multipart"
	"net/http"
	"testing"

	"github.com/heraldhq/herald/config"
)

// BenchmarkSendImageHTTP is BenchmarkSendHTTP with a camera snapshot: a
// 1280×720 JPEG of about 200 KB sent multipart (part payload, part file),
// which Herald sniffs, measures, thumbnails and stores in the message's
// commit. Compare with BenchmarkSendHTTP in the same run; b.SetBytes makes
// the MB/s the upload's.
func BenchmarkSendImageHTTP(b *testing.B) {
	env, stop := openTestEnv(b, b.TempDir(), nil, func(c *config.Config) {
		c.LogLevel = "warn"
		c.Plans.Free.AttachmentQuota = 1 << 50 // the benchmark measures the send, not the quota
	})
	defer stop()
	u := env.newUser("bench@example.com")
	url := env.srv.URL + "/v1/send/" + env.newChannel(u, "bench")["webhook_token"].(string)
	pic := benchSnapshot(b, 200<<10)
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	w.WriteField("payload", `{"title":"Person at the gate","body":"Front camera","priority":"high"}`)
	part, _ := w.CreateFormFile("file", "gate.jpg")
	part.Write(pic)
	w.Close()
	ct, raw := w.FormDataContentType(), body.Bytes()

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, MaxConnsPerHost: 64}}
	b.SetBytes(int64(len(pic)))
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			res, err := client.Post(url, ct, bytes.NewReader(raw))
			if err != nil {
				b.Error(err)
				return
			}
			msg, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != 200 {
				b.Errorf("status %d: %s", res.StatusCode, msg)
				return
			}
		}
	})
}

// benchSnapshot is a 1280×720 JPEG of at most size bytes and not much
// less: a gradient with noise over it, at the highest quality that fits.
func benchSnapshot(b *testing.B, size int) []byte {
	b.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 1280, 720))
	seed := uint32(1)
	for y := 0; y < 720; y++ {
		for x := 0; x < 1280; x++ {
			seed = seed*1664525 + 1013904223
			n := uint8(seed>>24) / 6
			img.SetRGBA(x, y, color.RGBA{uint8(x*200/1280) + n, uint8(y*200/720) + n, 120 + n, 255})
		}
	}
	var best []byte
	for lo, hi := 1, 100; lo <= hi; {
		q := (lo + hi) / 2
		var out bytes.Buffer
		if err := jpeg.Encode(&out, img, &jpeg.Options{Quality: q}); err != nil {
			b.Fatal(err)
		}
		if out.Len() <= size {
			best, lo = out.Bytes(), q+1
		} else {
			hi = q - 1
		}
	}
	if len(best) < size*3/4 {
		b.Fatalf("the snapshot is %d bytes, want about %d", len(best), size)
	}
	return best
}
