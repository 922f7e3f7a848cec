package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestConcurrentSendsAreStoredOnce: every 200 is a committed row of its
// own, whatever batch it went in.
func TestConcurrentSendsAreStoredOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ceiling.db")
	st, err := open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(st.handler())
	defer srv.Close()
	const n = 64
	ids := make(chan int64, n)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Post(srv.URL+"/v1/send/x", "application/json",
				strings.NewReader(`{"title":"Load test","body":"b","priority":"high"}`))
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			var out struct {
				OK bool  `json:"ok"`
				ID int64 `json:"id"`
			}
			if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&out) != nil || !out.OK {
				t.Errorf("status %d, %+v", resp.StatusCode, out)
				return
			}
			ids <- out.ID
		}()
	}
	wg.Wait()
	close(ids)
	seen := map[int64]bool{}
	for id := range ids {
		if seen[id] {
			t.Errorf("id %d answered twice", id)
		}
		seen[id] = true
	}
	srv.Close()
	st.close()

	// What was answered is in the file, read back by a new connection.
	again, err := open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer again.close()
	var count int
	if err := again.db.QueryRow("SELECT COUNT(*) FROM sends WHERE title = 'Load test'").Scan(&count); err != nil {
		t.Fatal(err)
	}
	if count != n || len(seen) != n {
		t.Errorf("%d rows stored, %d ids answered; want %d of each", count, len(seen), n)
	}
}

// TestBadSendStoresNothing: a body that is not a send is a 400 and no row.
func TestBadSendStoresNothing(t *testing.T) {
	st, err := open(context.Background(), filepath.Join(t.TempDir(), "ceiling.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.close()
	for _, body := range []string{`{"body":"no title"}`, `not json`, `{"title":"t","extra":1}`} {
		rec := httptest.NewRecorder()
		st.handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/send/x", strings.NewReader(body)))
		if rec.Code != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", body, rec.Code)
		}
	}
	var count int
	if err := st.db.QueryRow("SELECT COUNT(*) FROM sends").Scan(&count); err != nil || count != 0 {
		t.Errorf("%d rows (%v), want none", count, err)
	}
}

// TestListensOnLoopbackOnly refuses any other address.
func TestListensOnLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:8080", ":8080", "192.168.1.2:80"} {
		if err := run(addr, filepath.Join(t.TempDir(), "c.db")); err == nil || !strings.Contains(err.Error(), "127.0.0.1") {
			t.Errorf("%s: err = %v", addr, err)
		}
	}
}

// TestSendAfterCloseIsRefused: a send that reaches a closed store is a 503,
// not a panic on the closed queue.
func TestSendAfterCloseIsRefused(t *testing.T) {
	st, err := open(context.Background(), filepath.Join(t.TempDir(), "ceiling.db"))
	if err != nil {
		t.Fatal(err)
	}
	h := st.handler()
	st.close()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/send/x", strings.NewReader(`{"title":"late"}`)))
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("status %d, want 503", rec.Code)
	}
}
