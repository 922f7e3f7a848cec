package server

import (
	"encoding/json"
	"errors"

	"github.com/heraldhq/herald/store"
)

// parseSourceSecret reads PATCH source_secret: a string sets it, "" or null
// removes it, absent leaves it (service.UpdateChannel checks it).
func parseSourceSecret(raw json.RawMessage) (*string, error) {
	if raw == nil {
		return nil, nil
	}
	var s string
	if !isNull(raw) {
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, errInvalidPayload("source_secret must be a string or null")
		}
	}
	return &s, nil
}

// parseTemplate reads PATCH template: an object {title, body, priority,
// url} sets it (service.UpdateChannel checks it), null removes it, absent
// leaves it.
func parseTemplate(raw json.RawMessage) (store.Optional[store.Template], error) {
	var out store.Optional[store.Template]
	if raw == nil {
		return out, nil
	}
	out.Set = true
	if isNull(raw) {
		return out, nil
	}
	var t store.Template
	if err := decodeBytes(raw, &t); err != nil {
		var ae *apiError
		if errors.As(err, &ae) {
			return out, errInvalidPayload("template: %s", ae.message)
		}
		return out, err
	}
	out.Value = &t
	return out, nil
}
