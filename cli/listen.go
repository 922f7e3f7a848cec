package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
)

// listenCmds are herald listen and herald respond: a terminal's view of
// the live stream, and an answer from the command line.
func (a *app) listenCmds() []*cobra.Command { return []*cobra.Command{a.listenCmd(), a.respondCmd()} }

// remote is where listen and respond reach the server: --server and
// --token, else HERALD_SERVER and HERALD_TOKEN.
type remote struct{ server, token string }

func (a *app) remoteFlags(cmd *cobra.Command, r *remote) {
	cmd.Flags().StringVar(&r.server, "server", a.getenv("HERALD_SERVER"), "server base URL, like https://herald.example.com (default $HERALD_SERVER)")
	cmd.Flags().StringVar(&r.token, "token", a.getenv("HERALD_TOKEN"), "API key or session token (default $HERALD_TOKEN)")
}

func (r *remote) check() error {
	if r.server == "" || r.token == "" {
		return errors.New("--server and --token are required (or HERALD_SERVER and HERALD_TOKEN)")
	}
	u, err := url.Parse(r.server)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--server %q: want an http(s) base URL", r.server)
	}
	r.server = strings.TrimRight(r.server, "/")
	return nil
}

// Listen timings: how long to wait before reconnecting (doubling up to the
// cap), and how long a stream may stay silent (the server sends a heartbeat
// every 15 seconds) before it counts as dead.
const (
	listenRetryMin = 500 * time.Millisecond
	listenRetryMax = 30 * time.Second
	listenSilence  = 45 * time.Second
)

func (a *app) listenCmd() *cobra.Command {
	var r remote
	var channel, execCmd string
	var after int64
	cmd := &cobra.Command{
		Use:   "listen --server URL --token KEY [--channel ID] [--exec CMD]",
		Short: "Follow the live stream: print each new message, or run a command for it",
		Long: `Follows /v1/stream and prints each new message as one line of JSON. With
--exec, runs CMD (with sh -c) for each message instead, with the message in
its environment: HERALD_ID, HERALD_CHANNEL_ID, HERALD_TITLE, HERALD_BODY,
HERALD_PRIORITY, HERALD_CREATED_AT, HERALD_ACTIONS (JSON) and HERALD_MESSAGE
(the whole message as JSON). When the connection drops (a server restart,
say) it reconnects with Last-Event-ID, so no message is missed or repeated.`,
		Example: `  herald listen --server https://herald.example.com --token pk_live_...
  herald listen --channel ch_... --exec 'notify-send "$HERALD_TITLE" "$HERALD_BODY"'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := r.check(); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			l := &listener{app: a, remote: r, channel: channel, exec: execCmd, last: after}
			return l.run(ctx)
		},
	}
	a.remoteFlags(cmd, &r)
	cmd.Flags().StringVar(&channel, "channel", "", "only messages of this channel id")
	cmd.Flags().StringVar(&execCmd, "exec", "", "run this shell command for each message instead of printing it")
	cmd.Flags().Int64Var(&after, "after", 0, "start after this event id (replays what is kept since), instead of from now")
	return cmd
}

// listener follows the stream across reconnects.
type listener struct {
	*app
	remote
	channel, exec string
	last          int64 // the last event id seen; 0: none yet
	client        http.Client
}

// errFatal marks an answer that retrying cannot fix.
type errFatal struct{ error }

func (l *listener) run(ctx context.Context) error {
	wait := listenRetryMin
	for {
		got, err := l.stream(ctx)
		if ctx.Err() != nil {
			return nil
		}
		var fatal errFatal
		if errors.As(err, &fatal) {
			return fatal.error
		}
		if got {
			wait = listenRetryMin
		}
		fmt.Fprintf(l.stderr, "herald listen: %v; reconnecting in %s\n", err, wait)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		wait = min(wait*2, listenRetryMax)
	}
}

// stream reads one connection until it ends. got reports whether it was
// established, so the next wait starts short again.
func (l *listener) stream(ctx context.Context) (got bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.server+"/v1/stream", nil)
	if err != nil {
		return false, errFatal{err}
	}
	req.Header.Set("Authorization", "Bearer "+l.token)
	req.Header.Set("Accept", "text/event-stream")
	if l.last > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(l.last, 10))
	}
	res, err := l.client.Do(req)
	if err != nil {
		return false, fmt.Errorf("connect: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(res.Body, 4<<10))
		err := fmt.Errorf("server answered %s: %s", res.Status, bytes.TrimSpace(msg))
		if res.StatusCode == http.StatusUnauthorized || res.StatusCode == http.StatusForbidden || res.StatusCode == http.StatusBadRequest {
			return false, errFatal{err}
		}
		return false, err
	}
	fmt.Fprintf(l.stderr, "herald listen: connected to %s\n", l.server)
	// A stream that stays silent past the heartbeat is a dead connection.
	alive := time.AfterFunc(listenSilence, cancel)
	defer alive.Stop()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var id, event string
	var data strings.Builder
	for sc.Scan() {
		alive.Reset(listenSilence)
		line := sc.Text()
		if line == "" { // the end of an event
			if id != "" || event != "" || data.Len() > 0 {
				// A slow --exec is not a silent server.
				alive.Stop()
				if err := l.handle(ctx, id, event, data.String()); err != nil {
					return true, err
				}
				alive.Reset(listenSilence)
			}
			id, event = "", ""
			data.Reset()
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			id = value
		case "event":
			event = value
		case "data":
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(value)
		}
	}
	if err := sc.Err(); err != nil && ctx.Err() == nil {
		return true, fmt.Errorf("stream: %w", err)
	}
	return true, errors.New("stream ended")
}

// handle acts on one event: a new message is printed or run; the event id
// is kept only once that is done, so a crash here replays the event rather
// than losing it.
func (l *listener) handle(ctx context.Context, id, event, data string) error {
	switch event {
	case "stream.reset":
		fmt.Fprintf(l.stderr, "herald listen: the server no longer keeps every event since %d; some messages may be missing: %s\n", l.last, data)
	case "message.created":
		var m map[string]any
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			return fmt.Errorf("event %s: %w", id, err)
		}
		if l.channel == "" || m["channel_id"] == l.channel {
			if err := l.deliver(ctx, m, data); err != nil {
				return err
			}
		}
	}
	if n, err := strconv.ParseInt(id, 10, 64); err == nil && n > l.last {
		l.last = n
	}
	return nil
}

// deliver prints a message as one JSON line, or runs --exec for it.
func (l *listener) deliver(ctx context.Context, m map[string]any, raw string) error {
	if l.exec == "" {
		_, err := fmt.Fprintln(l.stdout, raw)
		return err
	}
	str := func(k string) string {
		if s, ok := m[k].(string); ok {
			return s
		}
		return ""
	}
	actions, _ := json.Marshal(m["actions"])
	cmd := exec.CommandContext(ctx, "sh", "-c", l.exec)
	cmd.Env = append(os.Environ(),
		"HERALD_ID="+str("id"), "HERALD_CHANNEL_ID="+str("channel_id"), "HERALD_TITLE="+str("title"),
		"HERALD_BODY="+str("body"), "HERALD_PRIORITY="+str("priority"), "HERALD_CREATED_AT="+str("created_at"),
		"HERALD_ACTIONS="+string(actions), "HERALD_MESSAGE="+raw)
	cmd.Stdout, cmd.Stderr = l.stdout, l.stderr
	if err := cmd.Run(); err != nil && ctx.Err() == nil {
		// The command's failure is its own business: report it and go on.
		fmt.Fprintf(l.stderr, "herald listen: --exec for message %s: %v\n", str("id"), err)
	}
	return nil
}

func (a *app) respondCmd() *cobra.Command {
	var r remote
	var fields []string
	cmd := &cobra.Command{
		Use:   "respond MESSAGE_ID ACTION [--field key=value ...]",
		Short: "Answer a message: tap its button or submit its form",
		Example: `  herald respond msg_... approve
  herald respond msg_... snooze --field hours=4 --field why=maintenance`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := r.check(); err != nil {
				return err
			}
			body := map[string]any{"action": args[1]}
			if len(fields) > 0 {
				resp := map[string]any{}
				for _, f := range fields {
					k, v, ok := strings.Cut(f, "=")
					if !ok {
						return fmt.Errorf("--field %q: want key=value", f)
					}
					resp[k] = formValue(v)
				}
				body["responses"] = resp
			}
			b, _ := json.Marshal(body)
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodPost,
				r.server+"/v1/messages/"+url.PathEscape(args[0])+"/respond", bytes.NewReader(b))
			if err != nil {
				return err
			}
			req.Header.Set("Authorization", "Bearer "+r.token)
			req.Header.Set("Content-Type", "application/json")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			defer res.Body.Close()
			out, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
			fmt.Fprintln(a.stdout, strings.TrimSpace(string(out)))
			if res.StatusCode != http.StatusOK {
				return fmt.Errorf("respond failed: %s", res.Status)
			}
			return nil
		},
	}
	a.remoteFlags(cmd, &r)
	cmd.Flags().StringArrayVar(&fields, "field", nil, "a form value key=value; numbers and true/false are sent as such (repeatable)")
	return cmd
}

// formValue sends numbers and booleans typed, as a form's number and
// checkbox fields want them; anything else is a string.
func formValue(v string) any {
	if b, err := strconv.ParseBool(v); err == nil && (v == "true" || v == "false") {
		return b
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil && strings.TrimSpace(v) == v {
		return n
	}
	return v
}
