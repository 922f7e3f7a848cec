package transform

import (
	"fmt"
	"sort"
	"strings"
)

// amAlert is one alert of an Alertmanager (or Grafana) notification.
type amAlert struct {
	Status       string            `json:"status"`
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	GeneratorURL string            `json:"generatorURL"`
	SilenceURL   string            `json:"silenceURL"`   // Grafana only
	DashboardURL string            `json:"dashboardURL"` // Grafana only
	PanelURL     string            `json:"panelURL"`     // Grafana only
}

// amGroup is Alertmanager's webhook body; Grafana's unified alerting sends
// the same with a few fields more.
type amGroup struct {
	Receiver          string            `json:"receiver"`
	Status            string            `json:"status"`
	Alerts            []amAlert         `json:"alerts"`
	GroupLabels       map[string]string `json:"groupLabels"`
	CommonLabels      map[string]string `json:"commonLabels"`
	CommonAnnotations map[string]string `json:"commonAnnotations"`
	ExternalURL       string            `json:"externalURL"`
	TruncatedAlerts   int               `json:"truncatedAlerts"`
	Title             string            `json:"title"` // Grafana only
}

// maxAlertsShown bounds the body: a group can hold hundreds of alerts.
const maxAlertsShown = 10

// alertmanager builds a message from an Alertmanager webhook notification.
func alertmanager(_ Headers, body []byte) (*Message, error) {
	var g amGroup
	if err := decodeBody(body, &g); err != nil {
		return nil, err
	}
	return alertGroup("Alertmanager", &g), nil
}

// grafana builds a message from a Grafana unified alerting webhook.
func grafana(_ Headers, body []byte) (*Message, error) {
	var g amGroup
	if err := decodeBody(body, &g); err != nil {
		return nil, err
	}
	m := alertGroup("Grafana", &g)
	if g.Title != "" {
		m.Title = g.Title
	}
	return m, nil
}

// alertGroup turns a group of alerts into one message: status and count in
// the title, one section per alert, severity to priority, and a link to the
// first alert's source (else the sender's own page).
func alertGroup(from string, g *amGroup) *Message {
	firing := 0
	for _, a := range g.Alerts {
		if a.Status == "firing" {
			firing++
		}
	}
	name := firstNonEmpty(g.GroupLabels["alertname"], g.CommonLabels["alertname"], g.Receiver, from)
	title := fmt.Sprintf("[RESOLVED] %s", name)
	if g.Status == "firing" {
		title = fmt.Sprintf("[FIRING:%d] %s", firing, name)
	}
	var b strings.Builder
	for i, a := range g.Alerts {
		if i == maxAlertsShown {
			fmt.Fprintf(&b, "\n… and %d more", len(g.Alerts)-maxAlertsShown)
			break
		}
		if i > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "**%s** %s", firstNonEmpty(a.Labels["alertname"], name), a.Status)
		if sev := a.Labels["severity"]; sev != "" {
			fmt.Fprintf(&b, " (%s)", sev)
		}
		if s := firstNonEmpty(a.Annotations["summary"], a.Annotations["description"]); s != "" {
			b.WriteString("\n" + s)
		}
		if l := labelList(a.Labels); l != "" {
			b.WriteString("\n" + l)
		}
	}
	if g.TruncatedAlerts > 0 {
		fmt.Fprintf(&b, "\n\n%d more alert(s) not sent by %s", g.TruncatedAlerts, from)
	}
	if len(g.Alerts) == 0 {
		fmt.Fprintf(&b, "%s sent a %s notification with no alerts", from, firstNonEmpty(g.Status, "blank"))
	}
	m := &Message{Title: title, Body: b.String(), Priority: alertPriority(g), URLLabel: "Open alert"}
	for _, a := range g.Alerts {
		if u := firstWebURL(a.PanelURL, a.DashboardURL, a.GeneratorURL); u != "" {
			m.URL = u
			break
		}
	}
	if m.URL == "" {
		m.URL, m.URLLabel = g.ExternalURL, "Open "+from
	}
	return m
}

// alertPriority is high for a firing group with a critical alert, low once
// everything is resolved, else normal.
func alertPriority(g *amGroup) string {
	if g.Status != "firing" {
		return "low"
	}
	for _, a := range g.Alerts {
		if a.Status != "firing" {
			continue
		}
		switch strings.ToLower(firstNonEmpty(a.Labels["severity"], g.CommonLabels["severity"])) {
		case "critical", "page", "error", "high", "emergency", "alert":
			return "high"
		}
	}
	return "normal"
}

// labelList renders labels as `k=v` pairs in a stable order, without the
// alert's name, which the line above already shows.
func labelList(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		if k != "alertname" && k != "severity" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("`%s=%s`", k, labels[k])
	}
	return strings.Join(parts, " ")
}

// firstWebURL is the first value that is an absolute http(s) URL.
func firstWebURL(vals ...string) string {
	for _, v := range vals {
		if webURL(v) {
			return v
		}
	}
	return ""
}

// uptimeKuma builds a message from Uptime Kuma's webhook notification
// ({heartbeat, monitor, msg}; heartbeat and monitor are null for the
// "Test" button). Heartbeat status: 0 down, 1 up, 2 pending, 3 maintenance.
func uptimeKuma(_ Headers, body []byte) (*Message, error) {
	var e struct {
		Msg       string `json:"msg"`
		Heartbeat *struct {
			Status *int   `json:"status"`
			Msg    string `json:"msg"`
			Time   string `json:"time"`
		} `json:"heartbeat"`
		Monitor *struct {
			Name     string `json:"name"`
			URL      string `json:"url"`
			Hostname string `json:"hostname"`
		} `json:"monitor"`
	}
	if err := decodeBody(body, &e); err != nil {
		return nil, err
	}
	if e.Heartbeat == nil || e.Heartbeat.Status == nil || e.Monitor == nil {
		if e.Msg == "" {
			return nil, nil
		}
		return &Message{Title: "Uptime Kuma", Body: e.Msg}, nil
	}
	state, prio := "status "+fmt.Sprint(*e.Heartbeat.Status), "normal"
	switch *e.Heartbeat.Status {
	case 0:
		state, prio = "down", "high"
	case 1:
		state = "up"
	case 2:
		state = "pending"
	case 3:
		state, prio = "in maintenance", "low"
	}
	name := firstNonEmpty(e.Monitor.Name, e.Monitor.Hostname, "monitor")
	m := &Message{Title: fmt.Sprintf("%s is %s", name, state), Priority: prio,
		Body: firstNonEmpty(e.Heartbeat.Msg, e.Msg), URL: e.Monitor.URL, URLLabel: "Open " + name}
	if e.Heartbeat.Time != "" {
		m.Body += fmt.Sprintf("\n\n_%s_", e.Heartbeat.Time)
	}
	return m, nil
}
