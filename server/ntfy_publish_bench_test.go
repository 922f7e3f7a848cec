package server

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/heraldhq/herald/config"
)

// BenchmarkNtfyPublishHTTP is BenchmarkSendHTTP through the ntfy door: the
// same message as headers and a body, POST /<token>. Compare the two in
// one run: the door should cost little beside the commit.
func BenchmarkNtfyPublishHTTP(b *testing.B) {
	env, stop := openTestEnv(b, b.TempDir(), nil, func(c *config.Config) {
		c.LogLevel = "warn"
	})
	defer stop()
	u := env.newUser("bench@example.com")
	url := env.srv.URL + "/" + env.newChannel(u, "bench")["webhook_token"].(string)
	body := []byte("**bold** message body of a realistic length for a homelab alert")
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, MaxConnsPerHost: 64}}
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, err := http.NewRequest("POST", url, bytes.NewReader(body))
			if err != nil {
				b.Error(err)
				return
			}
			req.Header["Title"] = []string{"Load test"}
			req.Header["Priority"] = []string{"high"}
			req.Header["Tags"] = []string{"warning,backup"}
			res, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != 200 {
				b.Errorf("status %d", res.StatusCode)
				return
			}
		}
	})
}
