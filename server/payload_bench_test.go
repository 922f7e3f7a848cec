package server

import "testing"

// BenchmarkParseSend measures decoding and validating a typical send payload
// with a form action (the most validation there is).
func BenchmarkParseSend(b *testing.B) {
	body := []byte(`{"title":"Deploy v2.3 to production?","body":"**42 files** changed, [diff](https://git.example.com/d/1)",
		"priority":"high","callback_url":"https://hooks.example.com/herald",
		"actions":[{"type":"button","key":"yes","label":"Deploy","style":"primary"},
		{"type":"form","key":"why","label":"Refuse","fields":[{"key":"reason","label":"Reason","type":"select","required":true,"options":["risky","later"]},
		{"key":"note","label":"Note","type":"textarea"}]},{"type":"url","label":"Open","value":"https://ci.example.com/run/1"}]}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := parseSend(body); err != nil {
			b.Fatal(err)
		}
	}
}
