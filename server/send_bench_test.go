package server

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/heraldhq/herald/config"

	"github.com/heraldhq/herald/service"
)

// BenchmarkSendHTTP measures POST /v1/send through the real server over
// loopback HTTP, 32 concurrent clients, durable commits (synchronous=full).
// Compare with BenchmarkBareHandler, the HTTP ceiling in the same run.
func BenchmarkSendHTTP(b *testing.B) {
	env, stop := openTestEnv(b, b.TempDir(), nil, func(c *config.Config) {
		c.LogLevel = "warn"
	})
	defer stop()
	u := env.newUser("bench@example.com")
	url := env.srv.URL + "/v1/send/" + env.newChannel(u, "bench")["webhook_token"].(string)
	benchPost(b, url)
}

// BenchmarkBareHandler is the ceiling: a handler that decodes the same JSON.
func BenchmarkBareHandler(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p service.SendPayload
		if err := decodeJSON(r, &p); err != nil {
			w.WriteHeader(400)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true}`+"\n")
	}))
	defer srv.Close()
	benchPost(b, srv.URL+"/v1/send/x")
}

func benchPost(b *testing.B, url string) {
	body := []byte(`{"title":"Load test","body":"**bold** message body of a realistic length for a homelab alert","priority":"high"}`)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, MaxConnsPerHost: 64}}
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			res, err := client.Post(url, "application/json", bytes.NewReader(body))
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
