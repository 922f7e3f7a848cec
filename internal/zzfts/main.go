package main

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	_ "modernc.org/sqlite"
)

func cpu() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func main() {
	opts := os.Args[1]
	round, _ := strconv.Atoi(os.Args[2])
	setup := ""
	if len(os.Args) > 3 {
		setup = os.Args[3]
	}
	dir, _ := os.MkdirTemp("", "zzf")
	defer os.RemoveAll(dir)
	src, _ := sql.Open("sqlite", "file:"+filepath.Join(dir, "src.db")+"?_pragma=journal_mode(WAL)&_pragma=synchronous(off)")
	src.SetMaxOpenConns(1)
	must(x(src, `CREATE TABLE messages (id TEXT, channel_id TEXT, title TEXT, body TEXT)`))
	n := 100000
	tx, _ := src.Begin()
	for i := 0; i < n; i++ {
		_, err := tx.Exec(`INSERT INTO messages VALUES (?, 'chn_01HXYZABCDEF', 'Load test', ?)`, fmt.Sprintf("msg_%d", i), fmt.Sprintf("**bold** message body of a realistic length for a homelab alert %d", i%1000))
		must(err)
	}
	must(tx.Commit())
	src.Close()
	db, _ := sql.Open("sqlite", "file:"+filepath.Join(dir, "s.db")+"?_pragma=journal_mode(WAL)&_pragma=synchronous(full)")
	db.SetMaxOpenConns(1)
	must(x(db, `ATTACH '`+filepath.Join(dir, "src.db")+`' AS src`))
	must(x(db, `CREATE VIRTUAL TABLE messages_fts USING fts5(title, body, readers, channel, content = '', contentless_delete = 1, tokenize = "unicode61 tokenchars '_'"`+opts+`)`))
	if setup != "" {
		must(x(db, setup))
	}
	c0 := cpu()
	t0 := time.Now()
	for pos := 0; pos < n; pos += round {
		tx, _ := db.Begin()
		_, err := tx.Exec(`INSERT INTO main.messages_fts (rowid, title, body, readers, channel) SELECT rowid, title, body, 'usr_01HXYZAAAA', channel_id FROM src.messages WHERE rowid > ? AND rowid <= ?`, pos, pos+round)
		must(err)
		must(tx.Commit())
	}
	fmt.Printf("%-30q round %5d setup %-40q cpu %.2f us/msg wall %.2f\n", opts, round, setup, float64((cpu()-c0).Nanoseconds())/1000/float64(n), float64(time.Since(t0).Nanoseconds())/1000/float64(n))
}

func x(db *sql.DB, q string) error { _, err := db.Exec(q); return err }
func must(err error) {
	if err != nil {
		panic(err)
	}
}
