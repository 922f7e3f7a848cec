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
