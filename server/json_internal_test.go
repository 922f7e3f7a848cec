package server

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/heraldhq/herald/store"
)

// The send answer is encoded by hand; it must be byte for byte what
// encoding/json writes, for real message ids.
func TestSendResultAppendJSON(t *testing.T) {
	for _, r := range []sendResult{
		{OK: true, ID: store.NewSortableID("msg_", time.Now()), Muted: false},
		{OK: true, ID: store.NewSortableID("msg_", time.Now()), Muted: true},
		{},
	} {
		var want bytes.Buffer
		if err := json.NewEncoder(&want).Encode(r); err != nil {
			t.Fatal(err)
		}
		if got := r.appendJSON(nil); !bytes.Equal(got, want.Bytes()) {
			t.Errorf("appendJSON(%+v) = %q, encoding/json gives %q", r, got, want.Bytes())
		}
	}
}

// TestTypeErrorsSayTheJSONType: a field of the wrong JSON type is named by
// its JSON path, with the type it needs in JSON's words: 1.5 for a whole
// number is refused as not a whole number.
func TestTypeErrorsSayTheJSONType(t *testing.T) {
	type inner struct {
		Count int     `json:"count"`
		Ratio float64 `json:"ratio"`
	}
	for body, want := range map[string]string{
		`{"approval":{"count":1.5}}`:   `field "approval.count" must be of type whole number`,
		`{"approval":{"ratio":"1"}}`:   `field "approval.ratio" must be of type number`,
		`{"approval":{"count":"two"}}`: `field "approval.count" must be of type whole number`,
	} {
		var dst struct {
			Approval inner `json:"approval"`
		}
		err := decodeBytes([]byte(body), &dst)
		ae, ok := asAPIError(err)
		if !ok || ae.message != want {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
}
