// Package ntfy is ntfy's wire format, as ntfy's own clients and the tools
// that publish to ntfy speak it: the message object that publishing
// answers and subscribing streams, its events and its error shape. It
// knows nothing of Herald's store or rules; the server's ntfy front doors
// translate between this and Herald's messages.
package ntfy

// Events of a subscription stream.
const (
	EventOpen          = "open"
	EventKeepalive     = "keepalive"
	EventMessage       = "message"
	EventMessageDelete = "message_delete" // the sequence's notification is gone
	EventMessageClear  = "message_clear"  // the sequence's notification is read and dismissed
	EventPollRequest   = "poll_request"
)

// Message is ntfy's message object: the answer to a publish and one line
// (or frame, or event) of a subscription. Only id, time, event and topic
// are always present.
type Message struct {
	ID          string      `json:"id"`
	SequenceID  string      `json:"sequence_id,omitempty"`
	Time        int64       `json:"time"` // Unix seconds; the future time of a scheduled message
	Expires     int64       `json:"expires,omitempty"`
	Event       string      `json:"event"`
	Topic       string      `json:"topic"`
	Title       string      `json:"title,omitempty"`
	Message     string      `json:"message,omitempty"`
	Priority    int         `json:"priority,omitempty"` // 1-5
	Tags        []string    `json:"tags,omitempty"`
	Click       string      `json:"click,omitempty"`
	Icon        string      `json:"icon,omitempty"`
	Actions     []Action    `json:"actions,omitempty"`
	Attachment  *Attachment `json:"attachment,omitempty"`
	ContentType string      `json:"content_type,omitempty"` // "text/markdown" for markdown
	Encoding    string      `json:"encoding,omitempty"`
}

// Action is one of a message's buttons, as ntfy clients show it: view
// opens URL; http makes the request described by Method, URL, Headers and
// Body; broadcast is an Android intent (Herald refuses it).
type Action struct {
	ID      string            `json:"id"`
	Action  string            `json:"action"` // view, http, broadcast, copy
	Label   string            `json:"label"`
	Clear   bool              `json:"clear"`
	URL     string            `json:"url,omitempty"`
	Method  string            `json:"method,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body,omitempty"`
	Intent  string            `json:"intent,omitempty"`
	Extras  map[string]string `json:"extras,omitempty"`
	Value   string            `json:"value,omitempty"` // copy's text
}

// Attachment is a message's file or picture; only URL is required.
type Attachment struct {
	Name    string `json:"name"`
	Type    string `json:"type,omitempty"`
	Size    int64  `json:"size,omitempty"`
	Expires int64  `json:"expires,omitempty"`
	URL     string `json:"url"`
}

// Error is ntfy's error answer: ntfy clients show Error. Code is ntfy's
// five-digit code, the HTTP status followed by two digits.
type Error struct {
	Code  int    `json:"code"`
	HTTP  int    `json:"http"`
	Error string `json:"error"`
	Link  string `json:"link,omitempty"`
}
