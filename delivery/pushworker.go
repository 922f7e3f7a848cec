package delivery

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"slices"
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
	pushLease       = 10 * time.Minute // a job sends to its devices one after another, up to 30 s each
)

// PushConfig is the push workers' policy ([push] in the configuration).
type PushConfig struct {
	Workers                 int // concurrent push jobs
	MaxAttempts             int // tries of a transient failure to one device
	BackoffBase, BackoffMax time.Duration
	// AnswerKey signs the credential with which a browser answers from a
	// notification (push.AnswerToken); nil: web notifications carry none.
	AnswerKey []byte
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
	p := &Pusher{st: st, d: d, log: opts.Logger, now: opts.Now, cfg: cfg,
		outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_pushes_total",
			Help: "Push notifications by platform and outcome: sent, retry, failed, deactivated, skipped.",
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
	loop := &pool[store.PushJob]{st: p.st, topic: store.TopicPush, workers: p.cfg.Workers, now: p.now, log: p.log,
		claim: func(ctx context.Context, n int) ([]store.PushJob, error) {
			return p.st.ClaimPushJobs(ctx, n, pushLease)
		},
		next: p.st.NextPushAt,
		work: p.process,
		// Every unmuted send wakes the pusher, most of them without a job
		// (the owner has no device): under load one look per millisecond,
		// not one per commit.
		settle: time.Millisecond,
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
	n := push.Notification{MessageID: m.ID, ChannelID: m.ChannelID, Title: m.Title, Body: m.Body,
		Priority: m.Priority, Actions: m.Actions}
	if err := p.forBrowsers(ctx, &n, m, kind, devices); err != nil {
		p.log.Error("push: read channel", "message", job.MessageID, "err", err)
		return
	}
	var retries []store.PushRetry
	for _, dev := range devices {
		if !p.d.Configured(dev.Platform) {
			p.outcomes.WithLabelValues(dev.Platform, "skipped").Inc()
			continue
		}
		dn := n
		if dev.Platform == "web" && kind == store.PushMessage && dev.SessionID != "" && p.cfg.AnswerKey != nil {
			dn.Answer = &push.Answer{DeviceID: dev.ID, Token: push.AnswerToken(p.cfg.AnswerKey, dev.ID, dev.SessionID, m.ID),
				URL: "/v1/messages/" + m.ID + "/notification-response"}
		}
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := p.d.Send(sctx, dev.Platform, dev.PushToken, dn)
		cancel()
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
			retries = append(retries, store.PushRetry{DeviceID: dev.ID, Attempts: job.Attempts, At: p.now()})
		case push.IsRetryable(err) && job.Attempts+1 < p.cfg.MaxAttempts:
			p.outcomes.WithLabelValues(dev.Platform, "retry").Inc()
			n := job.Attempts + 1
			retries = append(retries, store.PushRetry{DeviceID: dev.ID, Attempts: n,
				At: p.now().Add(Backoff(p.cfg.BackoffBase, p.cfg.BackoffMax, n))})
			p.log.Info("push: temporary failure, will retry", "device", dev.ID, "attempt", n, "err", err)
		default:
			p.outcomes.WithLabelValues(dev.Platform, "failed").Inc()
			p.log.Warn("push: failed", "device", dev.ID, "message", m.ID, "err", err)
		}
	}
	p.finish(ctx, job, retries)
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
