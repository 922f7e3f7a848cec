package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// parseAction reads --action "type=button,key=ok,label=OK,style=primary".
func parseAction(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return nil, fmt.Errorf("--action %q: want key=value pairs separated by commas", s)
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out, nil
}

func (a *app) sendCmd() *cobra.Command {
	var title, body, priority, callback string
	var actions []string
	cmd := &cobra.Command{
		Use:   "send WEBHOOK_URL --title T",
		Short: "Send a notification to a channel's webhook URL",
		Example: `  herald send http://127.0.0.1:8080/v1/send/TOKEN --title "Backup done" --body "**42 GB** in 3 min"
  herald send $URL --title "Deploy?" --action type=button,key=yes,label=Deploy,style=primary`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			msg := map[string]any{"title": title}
			if body != "" {
				msg["body"] = body
			}
			if priority != "" {
				msg["priority"] = priority
			}
			if callback != "" {
				msg["callback_url"] = callback
			}
			var acts []map[string]string
			for _, s := range actions {
				act, err := parseAction(s)
				if err != nil {
					return err
				}
				acts = append(acts, act)
			}
			if len(acts) > 0 {
				msg["actions"] = acts
			}
			b, _ := json.Marshal(msg)
			client := &http.Client{Timeout: 30 * time.Second}
			req, err := http.NewRequestWithContext(cmd.Context(), http.MethodPost, args[0], bytes.NewReader(b))
			if err != nil {
				return err
			}
			req.Header.Set("Content-Type", "application/json")
			res, err := client.Do(req)
			if err != nil {
				return err
			}
			defer res.Body.Close()
			out, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
			fmt.Fprintln(a.stdout, strings.TrimSpace(string(out)))
			if res.StatusCode != http.StatusOK {
				return fmt.Errorf("send failed: %s", res.Status)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&title, "title", "", "title (required)")
	cmd.Flags().StringVar(&body, "body", "", "Markdown body")
	cmd.Flags().StringVar(&priority, "priority", "", "low, normal or high")
	cmd.Flags().StringVar(&callback, "callback-url", "", "URL that receives the signed answer")
	cmd.Flags().StringArrayVar(&actions, "action", nil, "an action: type=button,key=K,label=L[,style=S] or type=url,label=L,value=URL (repeatable)")
	_ = cmd.MarkFlagRequired("title")
	return cmd
}
