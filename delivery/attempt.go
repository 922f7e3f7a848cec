package delivery

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/heraldhq/herald/netguard"
	"github.com/heraldhq/herald/signature"
	"github.com/heraldhq/herald/store"
)

// What the delivery log shows for an attempt that got no answer. The log is
// read by whoever chose the callback URL, so it must not tell a refused
// port from a TLS failure or a name that does not resolve: that would make
// the queue a port scanner of the networks Herald can reach. The cause goes
// to the server log instead. A call the policy refused never left Herald:
// the log says which rule refused it and which setting would allow it
// (netguard's Explain, which names no address a name resolved to in a
// private or listed network).
const (
	errTimedOut    = "timed out"
	errConnection  = "connection failed"
	errInvalidURL  = "invalid callback URL"
	errUnavailable = "internal error"
)

// attempt makes one delivery attempt of job and records it. A job whose
// receiver's host is resting is handed back instead, due when the rest
// ends, with no attempt counted.
func (q *Queue) attempt(ctx context.Context, job *store.Delivery) {
	host := hostOf(job.URL)
	if host != "" {
		if at, ok := q.hosts.allow(host); !ok {
			q.deferJob(ctx, job, at)
			return
		}
	}
	res, cause := q.send(ctx, job)
	if host != "" {
		o := hostAnswered
		if res.StatusCode == 0 {
			o = outcomeOf(cause, ctx.Err() != nil)
		}
		if q.hosts.done(host, o) {
			q.log.Warn("delivery: receiver's host keeps not answering; its callbacks wait", "host", logURL(host),
				"cause", cause)
		}
	}
	if ctx.Err() != nil && !res.Success {
		// Shutting down: do not count an attempt the shutdown cut short. The
		// job stays claimed until the next start releases it.
		return
	}
	n := job.Attempts + 1
	// The wait runs from the end of the attempt, so a slow timeout does not
	// eat into it.
	retryAt := q.now().Add(Backoff(q.cfg.BackoffBase, q.cfg.BackoffMax, n))
	// Record even while shutting down, so a delivered callback is not sent
	// again after the restart.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	state, err := q.st.RecordAttempt(rctx, job, res, q.cfg.MaxAttempts, retryAt)
	if err != nil {
		q.log.Error("delivery: record attempt", "delivery", job.ID, "err", err)
		return
	}
	q.metrics.outcome(state, res.Success)
	switch state {
	case store.DeliveryDelivered:
		q.log.Debug("delivery: delivered", "delivery", job.ID, "message", job.MessageID, "attempt", n, "status", res.StatusCode)
	case store.DeliveryFailed:
		q.log.Warn("delivery: dead-lettered after last attempt", "delivery", job.ID, "message", job.MessageID,
			"url", logURL(job.URL), "attempts", n, "status", res.StatusCode, "err", res.Error, "cause", cause)
	case store.DeliveryPending:
		q.log.Info("delivery: attempt failed, will retry", "delivery", job.ID, "message", job.MessageID,
			"url", logURL(job.URL), "attempt", n, "status", res.StatusCode, "err", res.Error, "cause", cause, "retry_at", retryAt)
	}
}

// deferJob hands job back, due at at.
func (q *Queue) deferJob(ctx context.Context, job *store.Delivery, at time.Time) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := q.st.DeferDelivery(rctx, job.ID, at); err != nil {
		q.log.Error("delivery: defer", "delivery", job.ID, "err", err)
		return
	}
	q.metrics.outcomes.WithLabelValues("deferred").Inc()
	q.log.Debug("delivery: receiver's host is resting; deferred", "delivery", job.ID, "url", logURL(job.URL), "until", at)
}

// send POSTs the job's body, signed with the channel's secret as it is now:
// after a rotation the next attempt carries the new signature. It returns
// the result as recorded and, for the server log only, what went wrong.
func (q *Queue) send(ctx context.Context, job *store.Delivery) (store.AttemptResult, error) {
	start := q.now()
	res := store.AttemptResult{At: start}
	fail := func(shown string, cause error) (store.AttemptResult, error) {
		res.Error = shown
		res.Duration = q.now().Sub(start)
		return res, cause
	}
	var req *http.Request
	var err error
	if job.Kind == store.KindAction {
		req, err = actionRequest(ctx, job)
	} else {
		req, err = q.callbackRequest(ctx, job)
	}
	if err != nil {
		var shown *shownError
		if errors.As(err, &shown) {
			return fail(shown.text, shown.cause)
		}
		return fail(errUnavailable, err)
	}
	req.Header.Set("User-Agent", q.cfg.UserAgent)
	resp, err := q.client.Do(req)
	if err != nil {
		// *url.Error repeats the whole URL, query string and all.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fail(describe(err), err)
	}
	// Read a little of the body so the connection can be reused; the
	// receiver's answer itself is not kept.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	res.StatusCode = resp.StatusCode
	res.Duration = q.now().Sub(start)
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		res.Success = true
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		// Where it points is the receiver's business, and could name an
		// internal host: the server log has it, without its query.
		res.Error = fmt.Sprintf("receiver answered %d; redirects are not followed", resp.StatusCode)
		where := "(no Location)"
		if loc, err := resp.Location(); err == nil {
			where = logURL(loc.String())
		}
		return res, fmt.Errorf("redirect to %s not followed", where)
	default:
		res.Error = fmt.Sprintf("receiver answered %d", resp.StatusCode)
	}
	return res, nil
}

// shownError is a failure to build a request: text for the delivery log,
// cause for the server's.
type shownError struct {
	text  string
	cause error
}

func (e *shownError) Error() string { return e.text + ": " + e.cause.Error() }

// callbackRequest is the signed POST of a callback, signed with the
// channel's secret as it is now: after a rotation the next attempt
// carries the new signature.
func (q *Queue) callbackRequest(ctx context.Context, job *store.Delivery) (*http.Request, error) {
	secret, err := q.st.ChannelSecret(ctx, job.ChannelID)
	if err != nil {
		return nil, &shownError{errUnavailable, fmt.Errorf("read channel secret: %w", err)}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, job.URL, bytes.NewReader(job.Body))
	if err != nil {
		return nil, &shownError{errInvalidURL, errors.New("build request: the URL does not parse")}
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("X-Service-Event", job.Event)
	h.Set("X-Service-Delivery", job.ID)
	now := q.now()
	h.Set(signature.Header, signature.Sign(secret, now, job.Body))
	// Standard Webhooks: the delivery id names the message, so every retry
	// of one delivery carries the same webhook-id and receivers can
	// deduplicate on it.
	if sig, err := signature.SignStandard(secret, job.ID, now, job.Body); err == nil {
		h.Set(signature.HeaderID, job.ID)
		h.Set(signature.HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
		h.Set(signature.HeaderSignature, sig)
	} else {
		q.log.Warn("delivery: no Standard Webhooks signature", "delivery", job.ID, "err", err)
	}
	return req, nil
}

// actionRequest is the request of a tapped http action, as its sender
// described it (method, headers, body), through the same guarded client
// as callbacks. It is not signed: its receiver is whatever the sender
// named, not a receiver of Herald's callbacks.
func actionRequest(ctx context.Context, job *store.Delivery) (*http.Request, error) {
	method := cmp.Or(job.Method, http.MethodPost)
	var body io.Reader
	if len(job.Body) > 0 {
		body = bytes.NewReader(job.Body)
	}
	req, err := http.NewRequestWithContext(ctx, method, job.URL, body)
	if err != nil {
		return nil, &shownError{errInvalidURL, errors.New("build request: the URL does not parse")}
	}
	if len(job.Headers) > 0 {
		var headers map[string]string
		if err := json.Unmarshal(job.Headers, &headers); err != nil {
			return nil, &shownError{errUnavailable, fmt.Errorf("read action headers: %w", err)}
		}
		for k, v := range headers {
			req.Header.Set(k, v)
		}
	}
	return req, nil
}

// describe is what the delivery log shows for a request that got no answer.
func describe(err error) string {
	var ne net.Error
	var be *netguard.BlockedError
	switch {
	case errors.As(err, &be):
		return "blocked: " + be.Explain("callbacks")
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return errTimedOut
	}
	return errConnection
}

// logURL is a callback URL as the server log may show it: scheme, host and
// path. Query strings and user info often carry the receiver's secrets.
func logURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(invalid URL)"
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}
