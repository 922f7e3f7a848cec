// Command storeceiling is the storage ceiling of Herald's send path
// (bench/compare.sh): a bare net/http server that decodes the same JSON as
// POST /v1/send/{token} and stores each send as one row of one SQLite table,
// with the driver Herald uses, in WAL mode with synchronous=FULL, through a
// group-commit writer: one goroutine takes every send queued, inserts them
// in one transaction, commits, and only then answers each 200. It is what a
// durable send costs with nothing else: no authentication, rate limit,
// stream event, push job, search index or security headers.
//
//	storeceiling -addr 127.0.0.1:PORT -db DIR/ceiling.db
//
// It listens on 127.0.0.1 only and runs until SIGINT or SIGTERM.
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	_ "modernc.org/sqlite"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on (127.0.0.1 only)")
	path := flag.String("db", "", "SQLite file to create")
	flag.Parse()
	if err := run(*addr, *path); err != nil {
		fmt.Fprintln(os.Stderr, "storeceiling:", err)
		os.Exit(1)
	}
}

func run(addr, path string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host != "127.0.0.1" {
		return fmt.Errorf("-addr %q: want 127.0.0.1:PORT", addr)
	}
	if path == "" {
		return errors.New("-db is required")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	st, err := open(ctx, path)
	if err != nil {
		return err
	}
	defer st.close()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: st.handler(), ReadHeaderTimeout: 10 * time.Second}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	<-stopped // Serve returns as Shutdown starts: let the sends in flight finish first
	return nil
}

// store is the one table and its group-commit writer.
type store struct {
	db     *sql.DB
	insert *sql.Stmt
	mu     sync.RWMutex // held to queue a send; close takes it to close the queue
	closed bool
	queue  chan *write
	done   chan struct{}
}

// write is one send waiting for its commit.
type write struct {
	title, body, priority string
	id                    int64
	err                   chan error
}

func open(ctx context.Context, path string) (*store, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=synchronous(full)&_pragma=busy_timeout(5000)")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1) // the writer's connection, as Herald's
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS sends (
		id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT NOT NULL,
		priority TEXT NOT NULL, created_at INTEGER NOT NULL)`); err != nil {
		db.Close()
		return nil, fmt.Errorf("create table: %w", err)
	}
	insert, err := db.PrepareContext(ctx, "INSERT INTO sends (title, body, priority, created_at) VALUES (?, ?, ?, ?)")
	if err != nil {
		db.Close()
		return nil, err
	}
	s := &store{db: db, insert: insert, queue: make(chan *write, 4096), done: make(chan struct{})}
	go s.writer()
	return s, nil
}

// close stops the writer once the sends queued are committed; a send that
// comes later is refused (add).
func (s *store) close() {
	s.mu.Lock()
	s.closed = true
	close(s.queue)
	s.mu.Unlock()
	<-s.done
	s.insert.Close()
	s.db.Close()
}

// add queues w for the writer, unless the store is closed.
func (s *store) add(w *write) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return false
	}
	s.queue <- w
	return true
}

// writer commits every send queued in one transaction, then answers them.
func (s *store) writer() {
	defer close(s.done)
	batch := make([]*write, 0, 256)
	for w := range s.queue {
		batch = append(batch[:0], w)
	more:
		for len(batch) < cap(batch) {
			select {
			case w, ok := <-s.queue:
				if !ok {
					break more
				}
				batch = append(batch, w)
			default:
				break more
			}
		}
		err := s.commit(batch)
		for _, w := range batch {
			w.err <- err
		}
	}
}

func (s *store) commit(batch []*write) error {
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	ins := tx.Stmt(s.insert)
	now := time.Now().UnixMilli()
	for _, w := range batch {
		res, err := ins.Exec(w.title, w.body, w.priority, now)
		if err != nil {
			return err
		}
		if w.id, err = res.LastInsertId(); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// handler answers POST /v1/send/{anything} once the send is committed.
func (s *store) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/send/{token}", func(w http.ResponseWriter, r *http.Request) {
		var p struct {
			Title    *string `json:"title"`
			Body     string  `json:"body"`
			Priority string  `json:"priority"`
		}
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil || p.Title == nil {
			http.Error(w, `{"error":"invalid_payload","message":"a JSON object with a title"}`, http.StatusBadRequest)
			return
		}
		wr := &write{title: *p.Title, body: p.Body, priority: p.Priority, err: make(chan error, 1)}
		if !s.add(wr) {
			http.Error(w, `{"error":"unavailable","message":"shutting down"}`, http.StatusServiceUnavailable)
			return
		}
		if err := <-wr.err; err != nil {
			slog.Error("commit", "err", err)
			http.Error(w, `{"error":"internal_error","message":"commit failed"}`, http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true,"id":` + strconv.FormatInt(wr.id, 10) + "}\n"))
	})
	return mux
}
