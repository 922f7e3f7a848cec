package ntfy

import (
	"errors"
	"testing"
)

func TestSubscribeLink(t *testing.T) {
	for _, c := range []struct {
		base, topic, display, want string
	}{
		{"https://herald.example", "Tok3nAbc", "Backups", "ntfy://herald.example/Tok3nAbc?display=Backups"},
		{"https://herald.example/", "t", "", "ntfy://herald.example/t"},
		{"https://herald.example", "t", "a+b (c)!", "ntfy://herald.example/t?display=a%2Bb%20%28c%29%21"},
		{"https://herald.example:443", "t", "", "ntfy://herald.example/t"},
		{"https://herald.example:8443", "t", "", "ntfy://herald.example:8443/t"},
		{"http://nas.lan:8080", "t", "", "ntfy://nas.lan:8080/t?secure=false"},
		{"http://nas.lan:80", "t", "", "ntfy://nas.lan/t?secure=false"},
		{"http://[fd00::1]:80", "t", "", "ntfy://[fd00::1]/t?secure=false"},
		{"http://192.168.1.5:8080", "t", "Disk & RAID", "ntfy://192.168.1.5:8080/t?display=Disk%20%26%20RAID&secure=false"},
	} {
		got, err := SubscribeLink(c.base, c.topic, c.display)
		if err != nil || got != c.want {
			t.Errorf("SubscribeLink(%q, %q, %q) = %q, %v; want %q", c.base, c.topic, c.display, got, err, c.want)
		}
	}
	if _, err := SubscribeLink("https://example.com/herald", "t", ""); !errors.Is(err, ErrLinkPath) {
		t.Errorf("a base URL under a path: err %v, want ErrLinkPath", err)
	}
	for _, bad := range []string{"", "nas.lan:8080", "ftp://nas.lan"} {
		if _, err := SubscribeLink(bad, "t", ""); err == nil {
			t.Errorf("SubscribeLink(%q) made a link", bad)
		}
	}
}
