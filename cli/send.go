package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// parsePairs reads a flag value such as "type=button,key=ok,label=OK".
func parsePairs(flag, s string) (map[string]string, error) {
	out := map[string]string{}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return nil, fmt.Errorf("--%s %q: want key=value pairs separated by commas", flag, s)
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out, nil
}

// parseField reads --field "key=K,label=L,type=T[,required=true][,options=a|b][,placeholder=P]".
func parseField(s string) (map[string]any, error) {
	pairs, err := parsePairs("field", s)
	if err != nil {
		return nil, err
	}
	f := map[string]any{}
	for k, v := range pairs {
		switch k {
		case "required":
			f[k] = v == "true" || v == "yes" || v == "1"
		case "options":
			f[k] = strings.Split(v, "|")
		default:
			f[k] = v
		}
	}
	return f, nil
}

// sendFlags are the flags of herald send.
type sendFlags struct {
	title, body, priority, callback, form string
	actions, fields                       []string
	wait                                  bool
	timeout                               time.Duration
}

// payload builds the send payload from the flags.
func (f *sendFlags) payload() (map[string]any, []map[string]any, error) {
	msg := map[string]any{"title": f.title}
	if f.body != "" {
		msg["body"] = f.body
	}
	if f.priority != "" {
		msg["priority"] = f.priority
	}
	if f.callback != "" {
		msg["callback_url"] = f.callback
	}
	var acts []map[string]any
	for _, s := range f.actions {
		pairs, err := parsePairs("action", s)
		if err != nil {
			return nil, nil, err
		}
		act := map[string]any{}
		for k, v := range pairs {
			act[k] = v
		}
		acts = append(acts, act)
	}
	if f.form == "" && len(f.fields) > 0 {
		return nil, nil, fmt.Errorf("--field needs --form key=K,label=L: the fields belong to a form")
	}
	if f.form != "" {
		pairs, err := parsePairs("form", f.form)
		if err != nil {
			return nil, nil, err
		}
		form := map[string]any{"type": "form"}
		for k, v := range pairs {
			form[k] = v
		}
		fields := []map[string]any{}
		for _, s := range f.fields {
			field, err := parseField(s)
			if err != nil {
				return nil, nil, err
			}
			fields = append(fields, field)
		}
		form["fields"] = fields
		acts = append(acts, form)
	}
	if len(acts) > 0 {
		msg["actions"] = acts
	}
	return msg, acts, nil
}

func (a *app) sendCmd() *cobra.Command {
	var f sendFlags
	cmd := &cobra.Command{
		Use:   "send WEBHOOK_URL --title T",
		Short: "Send a notification to a channel's webhook URL, and optionally wait for the answer",
		Long: `Sends a notification to a channel's webhook URL (the channel's webhook_url).

With --wait it then polls for the answer until one arrives or --timeout
passes, prints the answer as JSON on standard output, and exits with:

  0  answered: a button (not one styled "destructive"), a form, or an
     approval that was approved
  1  answered no, or not at all: a button styled "destructive" was tapped,
     the approval was rejected, or the answer expired
  2  error: the send failed, --timeout passed, the answer was already read by
     someone else, its callback delivery failed, or nothing can answer the
     message (below)

so that a script can run: herald send "$URL" --wait ... && deploy

Something must be able to answer a message waited for: a button (--action
type=button,...), a form (--form), or, on a channel with an approval rule, the
Approve and Reject votes (a message sent there without actions gets them).
The command cannot see the channel's rule before it sends, so it sends, and
its first poll, at once, tells it: a message nothing can answer ends the
wait then with exit 2 instead of waiting out --timeout.

A form needs --callback-url, even with --wait: what people type into a form
is delivered to that URL as a signed POST, retried until it arrives, while a
poll reads an answer only once and only for the server's polling.response_ttl
(10 minutes by default). --wait still polls the form's answer; buttons alone
need no --callback-url.`,
		Example: `  herald send "$URL" --title "Backup done" --body "**42 GB** in 3 min"
  herald send "$URL" --title "Deploy v2.3?" --wait --timeout 15m \
    --action type=button,key=yes,label=Deploy,style=primary \
    --action type=button,key=no,label=Cancel,style=destructive && ./deploy.sh
  herald send "$URL" --title "Why did the backup fail?" --callback-url https://ci.example.com/hook --wait \
    --form key=report,label=Report --field key=reason,label=Reason,type=text,required=true \
    --field key=retry,label=Retry?,type=select,options=now|tonight`,
		Args: needArgs("WEBHOOK_URL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			err := a.send(cmd.Context(), args[0], &f)
			var ee *exitError
			if err != nil && f.wait && !errors.As(err, &ee) {
				return &exitError{code: 2, err: err}
			}
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.title, "title", "", "title (required)")
	fl.StringVar(&f.body, "body", "", "Markdown body")
	fl.StringVar(&f.priority, "priority", "", "low, normal or high")
	fl.StringVar(&f.callback, "callback-url", "", "URL that receives the signed answer (required with --form, even with --wait: a form's answer is delivered there)")
	fl.StringArrayVar(&f.actions, "action", nil, "an action: type=button,key=K,label=L[,style=primary|destructive|default] or type=url,label=L,value=URL (repeatable)")
	fl.StringVar(&f.form, "form", "", "a form action: key=K,label=L[,style=S]; its fields come from --field")
	fl.StringArrayVar(&f.fields, "field", nil, "a form field: key=K,label=L,type=text|textarea|number|select|checkbox[,required=true][,options=a|b|c][,placeholder=P] (repeatable)")
	fl.BoolVar(&f.wait, "wait", false, "wait for the answer, print it as JSON and exit 0 (yes), 1 (no or expired) or 2 (error or timeout)")
	fl.DurationVar(&f.timeout, "timeout", time.Hour, "with --wait: how long to wait for the answer")
	_ = cmd.MarkFlagRequired("title")
	return cmd
}

// send posts the message and, with --wait, waits for its answer.
func (a *app) send(ctx context.Context, url string, f *sendFlags) error {
	msg, acts, err := f.payload()
	if err != nil {
		return err
	}
	if f.wait && !strings.Contains(url, "/v1/send/") {
		return fmt.Errorf("--wait needs a webhook URL of the form {base_url}/v1/send/{token}, got %q", redactWebhookURL(url))
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	client := &http.Client{Timeout: 30 * time.Second}
	status, out, err := postJSON(ctx, client, url, b)
	if err != nil {
		return hideToken(err)
	}
	if !f.wait {
		fmt.Fprintln(a.stdout, strings.TrimSpace(string(out)))
	}
	if status != http.StatusOK {
		if f.wait {
			fmt.Fprintln(a.stderr, strings.TrimSpace(string(out)))
		}
		return fmt.Errorf("send failed: %d %s", status, http.StatusText(status))
	}
	if !f.wait {
		return nil
	}
	var sent struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(out, &sent); err != nil || sent.ID == "" {
		return fmt.Errorf("send answered %q, which has no message id", out)
	}
	pollURL := strings.Replace(url, "/v1/send/", "/v1/callback/", 1) + "/" + sent.ID
	fmt.Fprintf(a.stderr, "sent %s; waiting up to %s for the answer\n", sent.ID, f.timeout)
	return a.wait(ctx, client, pollURL, f.timeout, acts)
}

// redactWebhookURL is raw with its webhook token replaced by REDACTED, for
// anything printed: a token in a terminal's scrollback or a CI log is a
// credential anyone who reads it can send with. The token is any path
// segment of 16 or more token characters that is not one of Herald's
// message ids, so that a mistyped path (/v1/sned/...) hides it too.
func redactWebhookURL(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		scheme, rest = "", raw
	}
	query := ""
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest, query = rest[:i], rest[i:]
	}
	segs := strings.Split(rest, "/")
	for i, seg := range segs {
		if i > 0 && len(seg) >= 16 && !strings.HasPrefix(seg, "msg_") &&
			strings.Trim(seg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == "" {
			segs[i] = "REDACTED"
		}
	}
	out := strings.Join(segs, "/") + query
	if ok {
		out = scheme + "://" + out
	}
	return out
}

// hideToken is err with the URL a failed request names (net/http's errors
// repeat it whole) redacted.
func hideToken(err error) error {
	var ue *neturl.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s %q: %w", ue.Op, redactWebhookURL(ue.URL), ue.Err)
	}
	return err
}

// postJSON posts body and returns the status and up to 1 MiB of the answer.
func postJSON(ctx context.Context, client *http.Client, url string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	out, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	return res.StatusCode, out, err
}
