package delivery

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/heraldhq/herald/netguard"
	"github.com/heraldhq/herald/signature"
	"github.com/heraldhq/herald/store"
)

// attempt makes one delivery attempt of job and records it.
func (q *Queue) attempt(ctx context.Context, job *store.Delivery) {
	res := q.send(ctx, job)
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
			"attempts", n, "status", res.StatusCode, "err", res.Error)
	case store.DeliveryPending:
		q.log.Info("delivery: attempt failed, will retry", "delivery", job.ID, "message", job.MessageID,
			"attempt", n, "status", res.StatusCode, "err", res.Error, "retry_at", retryAt)
	}
}

// send POSTs the job's body, signed with the channel's secret as it is now:
// after a rotation the next attempt carries the new signature.
func (q *Queue) send(ctx context.Context, job *store.Delivery) store.AttemptResult {
	start := q.now()
	res := store.AttemptResult{At: start}
	fail := func(err error) store.AttemptResult {
		res.Error = err.Error()
		res.Duration = q.now().Sub(start)
		return res
	}
	secret, err := q.st.ChannelSecret(ctx, job.ChannelID)
	if err != nil {
		return fail(fmt.Errorf("read channel secret: %w", err))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, job.URL, bytes.NewReader(job.Body))
	if err != nil {
		return fail(fmt.Errorf("build request: %w", err))
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", q.cfg.UserAgent)
	h.Set("X-Service-Event", job.Event)
	h.Set("X-Service-Delivery", job.ID)
	h.Set(signature.Header, signature.Sign(secret, q.now(), job.Body))
	resp, err := q.client.Do(req)
	if err != nil {
		var blocked *netguard.BlockedError
		if errors.As(err, &blocked) {
			return fail(blocked)
		}
		return fail(err)
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
		res.Error = fmt.Sprintf("redirect %d to %q not followed", resp.StatusCode, resp.Header.Get("Location"))
	default:
		res.Error = fmt.Sprintf("receiver answered %d", resp.StatusCode)
	}
	return res
}
