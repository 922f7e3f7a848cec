package server

import (
	"reflect"
	"testing"

	"github.com/heraldhq/herald/service"
)

// FuzzDecodeSendQuick: whatever body the quick decoder reads, the full
// decoder reads too, to the same payload.
func FuzzDecodeSendQuick(f *testing.F) {
	for _, c := range quickBodies {
		f.Add([]byte(c.body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var quick service.SendPayload
		if !decodeSendQuick(body, &quick) {
			return
		}
		var full service.SendPayload
		if err := decodeStrict(body, &full, ""); err != nil {
			t.Fatalf("%q: the full decoder refuses what the quick one read: %v", body, err)
		}
		if !reflect.DeepEqual(quick, full) {
			t.Fatalf("%q: quick %+v, full %+v", body, quick, full)
		}
		if err := checkNUL(body); err != nil {
			t.Fatalf("%q: the quick decoder read a NUL: %v", body, err)
		}
	})
}
