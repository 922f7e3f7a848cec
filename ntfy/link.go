package ntfy

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// ErrLinkPath is SubscribeLink's answer for a server reached under a path
// (https://example.com/herald): the app's link names a host and one topic,
// and the app would subscribe at the host's root.
var ErrLinkPath = errors.New("ntfy: the app's subscribe link cannot name a server under a path")

// SubscribeLink is the link that subscribes the ntfy Android app to topic
// on the server at baseURL, showing the subscription as display:
// ntfy://host[:port]/topic?display=...[&secure=false]. The app opens
// ntfy:// links (its manifest's intent filter), takes exactly one path
// segment as the topic, and reads https unless secure=false; a port is
// kept when it is not the scheme's default.
func SubscribeLink(baseURL, topic, display string) (string, error) {
	u, err := url.Parse(baseURL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", fmt.Errorf("ntfy: subscribe link: base URL %q is not an http(s) URL", baseURL)
	}
	if strings.Trim(u.Path, "/") != "" {
		return "", ErrLinkPath
	}
	host := u.Host
	if p := u.Port(); (u.Scheme == "https" && p == "443") || (u.Scheme == "http" && p == "80") {
		host = u.Hostname()
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
	}
	q := url.Values{}
	if display != "" {
		q.Set("display", display)
	}
	if u.Scheme == "http" {
		q.Set("secure", "false")
	}
	// %20 for a space, not +: the app decodes either, other readers
	// of the link only the first.
	link := url.URL{Scheme: "ntfy", Host: host, Path: "/" + topic, RawQuery: strings.ReplaceAll(q.Encode(), "+", "%20")}
	return link.String(), nil
}
