package delivery

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/heraldhq/herald/netguard"
	"github.com/heraldhq/herald/push"
	"github.com/heraldhq/herald/store"
)

// The push retry policy by default: a transient failure to one device is
// tried again a few times, 10 s, 20 s, 40 s... apart.
const (
	pushMaxAttempts = 5
	pushBackoffBase = 10 * time.Second
	pushBackoffMax  = 5 * time.Minute
)

// How a job spends its worker: it sends to up to pushParallel of its
// devices at once, each send bounded by pushSendTimeout, and starts no send
// after pushJobBudget: the devices left are queued again, as retries with
// no attempt counted. So a job ends within budget and send, well inside its
// lease.
const (
	pushParallel    = 8
	pushSendTimeout = 30 * time.Second
	pushJobBudget   = time.Minute
	pushLease       = 2 * time.Minute
)

// PushConfig is the push workers' policy ([push] in the configuration).
type PushConfig struct {
	Workers                 int // concurrent push jobs
	MaxAttempts             int // tries of a transient failure to one device
	BackoffBase, BackoffMax time.Duration
	// AnswerKey signs the credential with which a browser answers from a
	// notification (push.AnswerToken); nil: web notifications carry none.
	AnswerKey []byte
	// ImageLink is a link that reads a message's stored picture (its
	// thumbnail when it has one) without credentials, which push services
	// and phones fetch; nil: stored pictures are not shown in pushes.
	ImageLink func(ctx context.Context, m *store.Message, a *store.AttachmentInfo) (string, error)
}

// DefaultPushConfig is the policy a zero field of a PushConfig takes.
var DefaultPushConfig = PushConfig{Workers: 4, MaxAttempts: pushMaxAttempts, BackoffBase: pushBackoffBase, BackoffMax: pushBackoffMax}

// Pusher delivers the push jobs the send path commits with each message.
type Pusher struct {
	st       *store.Store
	d        *push.Dispatcher
	log      *slog.Logger
	now      func() time.Time
	cfg      PushConfig
	outcomes *prometheus.CounterVec
	hosts    *circuit // Web Push endpoints' hosts that keep not answering
}

// NewPusher builds a push worker pool over st sending through d.
func NewPusher(st *store.Store, d *push.Dispatcher, cfg PushConfig, opts Options) *Pusher {
	def := DefaultPushConfig
	cfg.Workers = cmp.Or(cfg.Workers, def.Workers)
	cfg.MaxAttempts = cmp.Or(cfg.MaxAttempts, def.MaxAttempts)
	cfg.BackoffBase = cmp.Or(cfg.BackoffBase, def.BackoffBase)
	cfg.BackoffMax = cmp.Or(cfg.BackoffMax, def.BackoffMax)
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	p := &Pusher{st: st, d: d, log: opts.Logger, now: opts.Now, cfg: cfg, hosts: newCircuit(opts.Now),
		outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_pushes_total",
			Help: "Push notifications by platform and outcome: sent, retry, deferred, held (quiet hours), settled (answered before a retry or held push was due), failed, deactivated, skipped.",
		}, []string{"platform", "outcome"})}
	if opts.Registry != nil {
		opts.Registry.MustRegister(p.outcomes)
	}
	return p
}

// Run pushes until ctx ends.
func (p *Pusher) Run(ctx context.Context) error {
	if err := p.st.ReleasePushLeases(ctx); err != nil {
		return err
	}
	share := fairShare(p.cfg.Workers)
	loop := &pool[store.PushJob]{st: p.st, topic: store.TopicPush, workers: p.cfg.Workers, now: p.now, log: p.log,
		claim: func(ctx context.Context, n int) ([]store.PushJob, error) {
			return p.st.ClaimPushJobsFair(ctx, n, share, pushLease)
		},
		next: p.st.NextPushAt,
		work: p.process,
		// Every unmuted send wakes the pusher, most of them without a job
		// (the owner has no device), and each look is a reader's first
		// read after a commit: a new snapshot, its pages read from the
		// file again. Under load one look per 10 ms, not one per commit
		// (about 400 a second at 32 connections, some 2 us of CPU a send);
		// a push waits at most that much longer to start, beside the
		// provider's own round trip.
		settle: 10 * time.Millisecond,
	}
	loop.run(ctx)
	return nil
}

// process sends one job to its devices and records what is left to retry.
func (p *Pusher) process(ctx context.Context, job store.PushJob) {
	m, err := p.st.Message(ctx, job.MessageID)
	if errors.Is(err, store.ErrNotFound) {
		p.finish(ctx, job, nil) // deleted meanwhile
		return
	}
	if err != nil {
		p.log.Error("push: read message", "message", job.MessageID, "err", err)
		return // the lease runs out and the job is tried again
	}
	kind := cmp.Or(job.Kind, store.PushMessage)
	devices, err := p.st.PushTargets(ctx, job.MessageID, job.DeviceID, kind)
	if err != nil {
		p.log.Error("push: recipients", "message", job.MessageID, "err", err)
		return
	}
	if job.DeviceID != "" && kind == store.PushMessage && (settled(m) || p.alertOver(ctx, m)) {
		// A retry, or a push held by quiet hours, that comes due after
		// the question was settled, or after an urgent message's alert
		// was acknowledged or ended: its buttons would ask it again, and
		// an alert would ring again.
		for _, dev := range devices {
			p.outcomes.WithLabelValues(dev.Platform, "settled").Inc()
			p.log.Debug("push: message settled meanwhile; not pushed", "device", dev.ID, "message", m.ID,
				"state", m.State, "approval", m.ApprovalStatus)
		}
		p.finish(ctx, job, nil)
		return
	}
	n := push.Notification{MessageID: m.ID, ChannelID: m.ChannelID, Title: m.Title, Body: m.Body,
		Priority: m.Priority, Actions: m.Actions}
	if a := withExtras(&n, m); a.Stored() && a.Image && p.cfg.ImageLink != nil {
		if n.Image, err = p.cfg.ImageLink(ctx, m, a); err != nil {
			p.log.Warn("push: picture link", "message", m.ID, "err", err) // pushed without it
		}
	}
	if err := p.forBrowsers(ctx, &n, m, kind, devices); err != nil {
		p.log.Error("push: read channel", "message", job.MessageID, "err", err)
		return
	}
	p.finish(ctx, job, p.sendAll(ctx, job, m, kind, &n, devices))
}

// sendAll sends n to devices, up to pushParallel at once, and returns the
// retries they leave.
func (p *Pusher) sendAll(ctx context.Context, job store.PushJob, m *store.Message, kind string, n *push.Notification,
	devices []store.Device) []store.PushRetry {
	budget, cancel := context.WithTimeout(ctx, pushJobBudget)
	defer cancel()
	var (
		mu      sync.Mutex
		retries []store.PushRetry
		wg      sync.WaitGroup
	)
	slots := make(chan struct{}, pushParallel)
	for _, dev := range devices {
		if !p.d.Configured(dev.Platform) {
			p.outcomes.WithLabelValues(dev.Platform, "skipped").Inc()
			continue
		}
		select {
		case slots <- struct{}{}:
		case <-budget.Done():
		}
		if budget.Err() != nil {
			// Out of time, or shutting down: this device was not reached.
			// It waits for a retry, with no attempt counted.
			mu.Lock()
			retries = append(retries, store.PushRetry{DeviceID: dev.ID, OwnerID: dev.UserID, Attempts: job.Attempts, At: p.now()})
			mu.Unlock()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			if r, ok := p.send(ctx, job, m, kind, *n, dev); ok {
				mu.Lock()
				retries = append(retries, r)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return retries
}

// send pushes n to one device and returns the retry it leaves, if any.
func (p *Pusher) send(ctx context.Context, job store.PushJob, m *store.Message, kind string, n push.Notification,
	dev store.Device) (store.PushRetry, bool) {
	if r, held := p.quiet(job, m, kind, &n, dev); held {
		return r, true
	}
	if dev.Platform == "web" && kind == store.PushMessage && dev.SessionID != "" && p.cfg.AnswerKey != nil {
		n.Answer = &push.Answer{DeviceID: dev.ID, Token: push.AnswerToken(p.cfg.AnswerKey, dev.ID, dev.SessionID, m.ID),
			URL: "/v1/messages/" + m.ID + "/notification-response"}
	}
	retry := store.PushRetry{DeviceID: dev.ID, OwnerID: dev.UserID, Attempts: job.Attempts}
	// A Web Push endpoint is any URL its user chose: one whose host keeps
	// not answering is given a rest, so that its pushes wait for a retry
	// instead of holding a worker each until they time out.
	host := ""
	if dev.Platform == "web" {
		host = hostOf(push.WebPushEndpoint(dev.PushToken))
	}
	if host != "" {
		if at, ok := p.hosts.allow(host); !ok {
			p.outcomes.WithLabelValues(dev.Platform, "deferred").Inc()
			p.log.Debug("push: endpoint's host is resting; deferred", "device", dev.ID, "host", host, "until", at)
			retry.At = at
			return retry, true
		}
	}
	sctx, cancel := context.WithTimeout(ctx, pushSendTimeout)
	err := p.d.Send(sctx, dev.Platform, dev.PushToken, n)
	cancel()
	if host != "" {
		var answered *push.Error
		o := hostAnswered
		if err != nil && !errors.As(err, &answered) {
			o = outcomeOf(err, ctx.Err() != nil)
		}
		if p.hosts.done(host, o) {
			p.log.Warn("push: endpoint's host keeps not answering; its pushes wait", "host", host, "user", dev.UserID, "err", err)
		}
	}
	switch {
	case err == nil:
		p.outcomes.WithLabelValues(dev.Platform, "sent").Inc()
	case push.IsPermanent(err):
		p.outcomes.WithLabelValues(dev.Platform, "deactivated").Inc()
		p.log.Info("push: device token rejected; device deactivated", "device", dev.ID, "err", err)
		p.deactivate(ctx, dev.ID)
	case netguard.IsBlocked(err):
		// A Web Push endpoint in a blocked network will never be
		// reached: the device is as dead as one whose token was
		// rejected, and a retry would only knock on the same door.
		p.outcomes.WithLabelValues(dev.Platform, "deactivated").Inc()
		p.log.Warn("push: endpoint in a blocked network; device deactivated", "device", dev.ID, "user", dev.UserID, "err", err)
		p.deactivate(ctx, dev.ID)
	case ctx.Err() != nil:
		// Shutting down: this device was not reached. Leave it for the
		// next start, without counting an attempt, rather than drop it.
		retry.At = p.now()
		return retry, true
	case push.IsRetryable(err) && job.Attempts+1 < p.cfg.MaxAttempts:
		p.outcomes.WithLabelValues(dev.Platform, "retry").Inc()
		retry.Attempts = job.Attempts + 1
		retry.At = p.now().Add(Backoff(p.cfg.BackoffBase, p.cfg.BackoffMax, retry.Attempts))
		p.log.Info("push: temporary failure, will retry", "device", dev.ID, "attempt", retry.Attempts, "err", err)
		return retry, true
	case dev.Platform == "web" && push.IsRetryable(err) && !push.IsThrottled(err):
		// Every attempt failed: an endpoint that never takes a push is as
		// dead as one that rejects it. (A 429 throttles Herald, and says
		// nothing of the endpoint; APNs and FCM failing is theirs.)
		p.outcomes.WithLabelValues(dev.Platform, "deactivated").Inc()
		p.log.Warn("push: endpoint failed every attempt; device deactivated", "device", dev.ID, "user", dev.UserID,
			"attempts", job.Attempts+1, "err", err)
		p.deactivate(ctx, dev.ID)
	default:
		p.outcomes.WithLabelValues(dev.Platform, "failed").Inc()
		p.log.Warn("push: failed", "device", dev.ID, "message", m.ID, "err", err)
	}
	return retry, false
}

// forBrowsers adds to n what a browser's notification shows besides the
// message: the channel's name, the app's page of the message and, on an
// update, where the message stands. Only when a web device is among the
// recipients: the channel is one more read.
func (p *Pusher) forBrowsers(ctx context.Context, n *push.Notification, m *store.Message, kind string, devices []store.Device) error {
	if !slices.ContainsFunc(devices, func(d store.Device) bool { return d.Platform == "web" }) {
		return nil
	}
	ch, err := p.st.ChannelByID(ctx, m.ChannelID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	if ch != nil {
		n.ChannelName = ch.Name
	}
	n.URL = "/#/messages/" + m.ID
	if kind == store.PushUpdate {
		n.Kind, n.Status = push.KindUpdate, cmp.Or(m.ApprovalStatus, "answered")
		if m.State == store.StateExpired && m.ApprovalStatus == "" {
			n.Status = "expired"
		}
		if m.Priority == "urgent" && m.State == store.StatePending && m.ApprovalStatus == "" {
			// Unanswered, the alert ended: acknowledged, cancelled or
			// expired.
			a, err := p.st.Alert(ctx, m.ID)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
			if a != nil {
				n.Status = a.State
			}
		}
	}
	return nil
}

func (p *Pusher) deactivate(ctx context.Context, deviceID string) {
	if err := p.st.DeactivateDevice(context.WithoutCancel(ctx), deviceID); err != nil && !errors.Is(err, store.ErrNotFound) {
		p.log.Error("push: deactivate device", "device", deviceID, "err", err)
	}
}

func (p *Pusher) finish(ctx context.Context, job store.PushJob, retries []store.PushRetry) {
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := p.st.FinishPushJob(fctx, job, retries); err != nil {
		p.log.Error("push: finish job", "job", job.ID, "err", err)
	}
}

// settled reports whether m, a question, no longer waits for its answer:
// something can answer it (store.Answerable: a button, a form or an
// approval rule), and it was answered, its answer read or expired, its
// callback failed, or its approval resolved. A message nothing can answer
// (news, or links only) is never settled.
func settled(m *store.Message) bool {
	if m.ApprovalStatus != "" {
		return true
	}
	return m.State != store.StatePending && store.Answerable(m.Actions, m.Approval != nil)
}

// alertOver reports whether m is urgent and its alert is no longer active:
// acknowledged, resolved, cancelled or expired. An acknowledgement leaves
// the message pending (settled does not see it). Should the alert not be
// read, the push goes out: a ring too many rather than one missed.
func (p *Pusher) alertOver(ctx context.Context, m *store.Message) bool {
	if m.Priority != "urgent" {
		return false
	}
	a, err := p.st.Alert(ctx, m.ID)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			p.log.Warn("push: read alert", "message", m.ID, "err", err)
		}
		return false
	}
	return a.State != store.AlertActive
}

// withExtras adds to n what m carries beside its text: its sequence's
// group, so that it replaces the sequence's earlier notification, and its
// tags, click, icon and picture by URL. It returns m's stored attachment,
// nil for none.
func withExtras(n *push.Notification, m *store.Message) *store.AttachmentInfo {
	if m.SequenceID != "" {
		n.Group = push.SequenceGroup(m.ChannelID, m.SequenceID)
	}
	if len(m.Extras) == 0 {
		return nil
	}
	// The service wrote it; one that does not read is pushed without.
	e, err := store.DecodeExtras(m.Extras)
	if err != nil {
		return nil
	}
	n.Tags, n.Click, n.Icon = e.Tags, e.Click, e.Icon
	if push.LooksLikeImage(e.Attach) {
		n.Image = e.Attach
	}
	return e.Attachment
}
