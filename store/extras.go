package store

import "encoding/json"

// Extras are the presentation details a message may carry beside its
// title and body, shown by the web app and handed to ntfy clients. All
// are optional; the zero value is none.
type Extras struct {
	Tags     []string `json:"tags,omitempty"`      // ntfy tags; emoji short codes already turned into emoji where ntfy would
	Click    string   `json:"click_url,omitempty"` // opened when the notification itself is tapped
	Icon     string   `json:"icon_url,omitempty"`
	Attach   string   `json:"attach_url,omitempty"` // a picture or file by URL, shown as a picture where the platform can
	Markdown bool     `json:"markdown,omitempty"`
	// SequenceID groups a message with earlier ones of the same channel:
	// a later message replaces the earlier notification on every device.
	SequenceID string `json:"sequence_id,omitempty"`
	// NtfyPriority is the 1-5 priority an ntfy or Gotify sender gave,
	// kept for ntfy clients; 0 when the sender used Herald's words.
	NtfyPriority int `json:"-"`
	// Attachment is the file or picture kept with the message (or a link
	// not fetched); nil without one. Never decoded from a send's JSON,
	// whose "attachment" asks for one.
	Attachment *AttachmentInfo `json:"-"`
}

// storedExtras is how Extras are kept in the store: as sent, with the
// ntfy priority that Herald's own JSON may not set.
type storedExtras struct {
	Extras
	NtfyPriority int             `json:"ntfy_priority,omitempty"`
	Attachment   *AttachmentInfo `json:"attachment,omitempty"`
}

// EncodeExtras is the stored form of e: nil when it holds nothing, so a
// plain message stores nothing more.
func EncodeExtras(e *Extras) (json.RawMessage, error) {
	if e.empty() {
		return nil, nil
	}
	return json.Marshal(storedExtras{Extras: *e, NtfyPriority: e.NtfyPriority, Attachment: e.Attachment})
}

// DecodeExtras reads the stored form of a message's extras; nil is none.
func DecodeExtras(doc json.RawMessage) (Extras, error) {
	var se storedExtras
	if len(doc) == 0 {
		return se.Extras, nil
	}
	if err := json.Unmarshal(doc, &se); err != nil {
		return Extras{}, err
	}
	se.Extras.NtfyPriority, se.Extras.Attachment = se.NtfyPriority, se.Attachment
	return se.Extras, nil
}

func (e *Extras) empty() bool {
	return len(e.Tags) == 0 && e.Click == "" && e.Icon == "" && e.Attach == "" && !e.Markdown &&
		e.SequenceID == "" && e.NtfyPriority == 0 && e.Attachment == nil
}
