package cli

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/delivery"
	"github.com/heraldhq/herald/netguard"
	"github.com/heraldhq/herald/push"
	"github.com/heraldhq/herald/service"
	"github.com/heraldhq/herald/store"
)

// buildPusher makes the push worker over the configured providers.
func (p *serveParts) buildPusher(ctx context.Context, cfg config.Config, svc *service.Service, guard netguard.Policy, reg *prometheus.Registry) (*delivery.Pusher, error) {
	dispatcher, err := pushDispatcher(ctx, cfg, svc, guard, p.log)
	if err != nil {
		return nil, err
	}
	answerKey, err := svc.NotificationKey(ctx)
	if err != nil {
		return nil, err
	}
	return delivery.NewPusher(p.st, dispatcher, delivery.PushConfig{Workers: cfg.Push.Workers,
		MaxAttempts: cfg.Push.MaxAttempts, BackoffBase: cfg.Push.BackoffBase.Duration, BackoffMax: cfg.Push.BackoffMax.Duration,
		AnswerKey: answerKey, ImageLink: imageLink(svc)},
		delivery.Options{Logger: p.log, Registry: reg}), nil
}

// pushDispatcher sets up each configured push provider. One that is not
// configured is skipped with one log line: its devices get no pushes. APNs
// and FCM go to hosts the operator configured; a Web Push endpoint is any
// URL a user registered, so it goes through guard like a callback.
func pushDispatcher(ctx context.Context, cfg config.Config, svc *service.Service, guard netguard.Policy, log *slog.Logger) (*push.Dispatcher, error) {
	client := &http.Client{Timeout: 30 * time.Second}
	var apns *push.APNs
	if c := cfg.Push.APNs; c.KeyFile != "" {
		var err error
		if apns, err = push.NewAPNs(push.APNsConfig{KeyFile: c.KeyFile, KeyID: c.KeyID, TeamID: c.TeamID, Topic: c.Topic,
			Production: c.Production, Host: c.Host, CriticalAlerts: c.CriticalAlerts}, nil); err != nil {
			return nil, err
		}
	} else {
		log.Info("push: APNs not configured ([push.apns] key_file); iOS devices get no pushes")
	}
	var fcm *push.FCM
	if c := cfg.Push.FCM; c.CredentialsFile != "" {
		var err error
		if fcm, err = push.NewFCM(push.FCMConfig{CredentialsFile: c.CredentialsFile, ProjectID: c.ProjectID, Endpoint: c.Endpoint}, client); err != nil {
			return nil, err
		}
	} else {
		log.Info("push: FCM not configured ([push.fcm] credentials_file); Android devices get no pushes")
	}
	pub, priv, err := svc.VAPIDKeys(ctx)
	if err != nil {
		return nil, err
	}
	subject := cfg.Push.WebPush.Subject
	if subject == "" {
		// VAPID wants a mailto: or https: contact; an https base_url will do.
		subject = "mailto:herald@localhost"
		if strings.HasPrefix(cfg.BaseURL, "https://") {
			subject = cfg.BaseURL
		}
		log.Info("push: [push.webpush] subject not set; set it to a mailto: address push services can reach", "using", subject)
	}
	return push.NewDispatcher(apns, fcm, push.NewWebPush(subject, pub, priv, guard.Client(30*time.Second))), nil
}

// imageLink is the signed link pushes show a stored picture by: its
// thumbnail when it has one.
func imageLink(svc *service.Service) func(context.Context, *store.Message, *store.AttachmentInfo) (string, error) {
	return func(ctx context.Context, m *store.Message, a *store.AttachmentInfo) (string, error) {
		link, _, err := svc.AttachmentLink(ctx, m.CreatedAt, a, a.Thumbnail)
		return link, err
	}
}
