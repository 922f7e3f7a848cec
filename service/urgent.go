package service

import (
	"cmp"
	"slices"
	"time"

	"github.com/heraldhq/herald/store"
)

// PriorityUrgent is the priority of a message that alerts until
// acknowledged.
const PriorityUrgent = "urgent"

// AckKey is the key of an urgent message's Acknowledge button.
const AckKey = "acknowledge"

// Bounds of an urgent alert, in seconds. A repeat more often than every
// 30 s is a flood, not an alert; an alert that nobody acknowledged in 3
// hours has failed, and its sender should learn so.
const (
	MinRepeatSeconds     = 30
	MaxExpireSeconds     = 3 * 60 * 60
	DefaultRepeatSeconds = 300
	DefaultExpireSeconds = 3600
	MaxEscalation        = 10
)

// AckButton is the Acknowledge button added to an urgent message that has
// none of its own.
var AckButton = Action{Type: "button", Key: AckKey, Label: "Acknowledge", Style: "primary"}

// UrgentOptions are a send's own alert times, overriding its channel's
// policy field by field.
type UrgentOptions struct {
	RepeatSeconds        *int `json:"repeat_seconds"`
	ExpireSeconds        *int `json:"expire_seconds"`
	EscalateAfterSeconds *int `json:"escalate_after_seconds"`
}

// checkUrgentSend checks what CheckSend can of an urgent send without its
// channel: the options' bounds, and room for the Acknowledge button.
func checkUrgentSend(p *SendPayload) error {
	if p.Priority != PriorityUrgent {
		if p.Urgent != nil {
			return invalid("urgent is for urgent messages: set priority to urgent, or leave urgent out")
		}
		return nil
	}
	ack := slices.IndexFunc(p.Actions, func(a Action) bool { return a.Key == AckKey })
	switch {
	case ack >= 0 && p.Actions[ack].Type != "button":
		return invalid("actions[%d]: on an urgent message the key %q is the Acknowledge button's: give it to a button, or to no action", ack, AckKey)
	case ack < 0 && len(p.Actions) >= MaxActions:
		return invalid("an urgent message gets an Acknowledge button: at most %d actions of its own, "+
			"or make one of them the button with key %q", MaxActions-1, AckKey)
	}
	if o := p.Urgent; o != nil {
		if o.RepeatSeconds != nil && (*o.RepeatSeconds < MinRepeatSeconds || *o.RepeatSeconds > MaxExpireSeconds) {
			return invalid("urgent.repeat_seconds must be between %d and %d", MinRepeatSeconds, MaxExpireSeconds)
		}
		if o.ExpireSeconds != nil && (*o.ExpireSeconds < MinRepeatSeconds || *o.ExpireSeconds > MaxExpireSeconds) {
			return invalid("urgent.expire_seconds must be between %d and %d (3 hours)", MinRepeatSeconds, MaxExpireSeconds)
		}
		if o.EscalateAfterSeconds != nil && (*o.EscalateAfterSeconds < MinRepeatSeconds || *o.EscalateAfterSeconds > MaxExpireSeconds) {
			return invalid("urgent.escalate_after_seconds must be between %d and %d", MinRepeatSeconds, MaxExpireSeconds)
		}
	}
	return nil
}

// urgentAlert is the alert of an urgent send to ch: the channel's policy,
// overridden by the send's own times. A channel without a policy refuses
// urgent messages, naming the setting: its owner has not agreed to be
// woken. A muted channel stores the message without an alert (nothing is
// pushed).
func urgentAlert(ch *store.Channel, p *SendPayload, muted bool) (*store.NewAlert, error) {
	pol := ch.Urgent
	if pol == nil {
		return nil, invalid("this channel does not take urgent messages: its owner turns them on with the channel's urgent " +
			"setting (PATCH /v1/channels/{id} with \"urgent\": {}); send with priority high instead")
	}
	repeat, expire, escalate := pol.RepeatSeconds, pol.ExpireSeconds, pol.EscalateAfterSeconds
	if o := p.Urgent; o != nil {
		repeat = cmp.Or(deref(o.RepeatSeconds), repeat)
		expire = cmp.Or(deref(o.ExpireSeconds), expire)
		escalate = cmp.Or(deref(o.EscalateAfterSeconds), escalate)
	}
	if repeat > expire {
		return nil, invalid("urgent.repeat_seconds (%d) must not exceed urgent.expire_seconds (%d): it would never repeat", repeat, expire)
	}
	if len(pol.Escalation) == 0 {
		escalate = 0
	}
	if muted {
		return nil, nil
	}
	sec := func(n int) time.Duration { return time.Duration(n) * time.Second }
	return &store.NewAlert{Repeat: sec(repeat), Expire: sec(expire), EscalateAfter: sec(escalate)}, nil
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// compatUrgent makes an ntfy priority 5 (max) or Gotify priority 10 send
// to a channel that takes urgent messages urgent, with the channel's
// policy, where it can alert: pushed (not ntfy's cache=no or firebase=no)
// and with room for the Acknowledge button. Else it stays high.
func compatUrgent(p *SendPayload) {
	if p.Ephemeral || p.NoPush || checkUrgentSend(&SendPayload{Priority: PriorityUrgent, Actions: p.Actions}) != nil {
		return
	}
	p.Priority = PriorityUrgent
}

// withAckButton returns actions with the Acknowledge button last, unless
// one of them is it already.
func withAckButton(actions []Action) []Action {
	if slices.ContainsFunc(actions, func(a Action) bool { return a.Key == AckKey }) {
		return actions
	}
	return append(slices.Clip(actions), AckButton)
}

// checkUrgentPolicy checks a channel's urgent policy and fills its
// defaults: 30 s <= repeat <= expire <= 3 h, escalate_after at least 30 s
// when the escalation list names anyone (default: the repeat interval),
// and at most MaxEscalation distinct, well-formed entries.
func checkUrgentPolicy(p *store.UrgentPolicy) error {
	p.RepeatSeconds = cmp.Or(p.RepeatSeconds, DefaultRepeatSeconds)
	p.ExpireSeconds = cmp.Or(p.ExpireSeconds, DefaultExpireSeconds)
	if p.RepeatSeconds < MinRepeatSeconds || p.RepeatSeconds > MaxExpireSeconds {
		return invalid("urgent.repeat_seconds must be between %d and %d", MinRepeatSeconds, MaxExpireSeconds)
	}
	if p.ExpireSeconds < MinRepeatSeconds || p.ExpireSeconds > MaxExpireSeconds {
		return invalid("urgent.expire_seconds must be between %d and %d (3 hours)", MinRepeatSeconds, MaxExpireSeconds)
	}
	if p.RepeatSeconds > p.ExpireSeconds {
		return invalid("urgent.repeat_seconds (%d) must not exceed urgent.expire_seconds (%d)", p.RepeatSeconds, p.ExpireSeconds)
	}
	if len(p.Escalation) > MaxEscalation {
		return invalid("urgent.escalation lists more than %d people", MaxEscalation)
	}
	if p.Escalation == nil {
		p.Escalation = []string{}
	}
	entries, err := normalizeEntries("urgent.escalation", p.Escalation)
	if err != nil {
		return err
	}
	p.Escalation = entries
	switch {
	case len(entries) == 0 && p.EscalateAfterSeconds != 0:
		return invalid("urgent.escalate_after_seconds needs urgent.escalation: whom to reach")
	case len(entries) == 0:
	case p.EscalateAfterSeconds == 0:
		p.EscalateAfterSeconds = p.RepeatSeconds
	case p.EscalateAfterSeconds < MinRepeatSeconds || p.EscalateAfterSeconds > MaxExpireSeconds:
		return invalid("urgent.escalate_after_seconds must be between %d and %d", MinRepeatSeconds, MaxExpireSeconds)
	}
	return nil
}
