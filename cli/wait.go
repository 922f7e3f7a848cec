package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// pollEvery is how often herald send --wait asks for the answer. Polling is
// a cheap read that no rate limit counts.
const pollEvery = time.Second

// pollAnswer is what GET /v1/callback/{token}/{message_id} answers.
type pollAnswer struct {
	Status         string `json:"status"`
	Answerable     *bool  `json:"answerable"` // false: pending, and nothing can answer it
	ApprovalStatus string `json:"approval_status"`
	Result         struct {
		TriggeredBy string `json:"triggered_by"`
	} `json:"result"`
}

// wait polls pollURL until the answer comes or timeout passes, prints the
// answer and returns an *exitError with the outcome's code (nil for 0).
// Network errors and 5xx answers are retried: the server may be restarting.
func (a *app) wait(ctx context.Context, client *http.Client, pollURL string, timeout time.Duration, acts []map[string]any) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	var lastErr error
	for {
		raw, err := getAnswer(ctx, client, pollURL)
		var ans pollAnswer
		switch {
		case err != nil:
			lastErr = err
		case json.Unmarshal(raw, &ans) != nil:
			return &exitError{code: 2, err: fmt.Errorf("poll answered %q, which is not JSON", raw)}
		case ans.Status != "pending":
			fmt.Fprintln(a.stdout, strings.TrimSpace(string(raw)))
			return outcome(ans, acts)
		case ans.Answerable != nil && !*ans.Answerable:
			return &exitError{code: 2, err: errUnanswerable}
		}
		if errors.Is(lastErr, errPollRefused) {
			return &exitError{code: 2, err: lastErr}
		}
		select {
		case <-ctx.Done():
			if lastErr != nil {
				return &exitError{code: 2, err: fmt.Errorf("no answer within %s (last poll: %v)", timeout, lastErr)}
			}
			return &exitError{code: 2, err: fmt.Errorf("no answer within %s", timeout)}
		case <-tick.C:
		}
	}
}

// errUnanswerable ends a wait at its first poll when the server says that
// nothing can answer the message: waiting would last the whole --timeout.
var errUnanswerable = errors.New("nothing can answer this message, so --wait would wait for nothing: it has no button or form, " +
	"and its channel has no approval rule (it was sent, as a plain notification). Give it a button " +
	"(--action type=button,key=K,label=L) or a form (--form ...), send it to a channel with an approval rule, or send it without --wait")

// errPollRefused marks a poll answer that waiting longer cannot change
// (an unknown token or message).
var errPollRefused = errors.New("poll refused")

// getAnswer makes one poll. A 4xx is errPollRefused; a 5xx or a network
// error is worth another try.
func getAnswer(ctx context.Context, client *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	res, err := client.Do(req)
	if err != nil {
		return nil, hideToken(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	switch {
	case res.StatusCode >= 500:
		return nil, fmt.Errorf("poll: %d %s", res.StatusCode, http.StatusText(res.StatusCode))
	case res.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("%w: %d %s", errPollRefused, res.StatusCode, strings.TrimSpace(string(raw)))
	}
	return raw, nil
}

// outcome turns an answer into herald send --wait's exit status: nil (0)
// for yes, 1 for no or expired, 2 for an answer that is gone.
func outcome(ans pollAnswer, acts []map[string]any) error {
	switch ans.Status {
	case "submitted":
	case "expired":
		return &exitError{code: 1, err: errors.New("the question expired without an answer")}
	case "already_read":
		return &exitError{code: 2, err: errors.New("the answer was already read by another poll")}
	case "failed":
		return &exitError{code: 2, err: errors.New("the answer's callback delivery failed")}
	default:
		return &exitError{code: 2, err: fmt.Errorf("unknown status %q", ans.Status)}
	}
	switch ans.ApprovalStatus {
	case "":
	case "approved":
		return nil
	default:
		return &exitError{code: 1, err: fmt.Errorf("the approval was %s", ans.ApprovalStatus)}
	}
	for _, act := range acts {
		if act["key"] == ans.Result.TriggeredBy && act["style"] == "destructive" {
			return &exitError{code: 1, err: fmt.Errorf("answered %q", ans.Result.TriggeredBy)}
		}
	}
	return nil
}
