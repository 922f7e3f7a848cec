// Command verify checks a Herald callback's Standard Webhooks signature.
//
//	HERALD_SECRET=whsec_... WEBHOOK_ID=dlv_... WEBHOOK_TIMESTAMP=... WEBHOOK_SIGNATURE='v1,...' go run verify.go < body.json
//
// Any Standard Webhooks library does the same (github.com/standard-webhooks/standard-webhooks).
package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
)

// verify reports whether signatures (space-separated "v1,<base64>") sign
// id, timestamp and body under secret.
func verify(secret, id, timestamp, signatures string, body []byte) bool {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_")) // the key is the decoded bytes
	if err != nil || id == "" {
		return false
	}
	t, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil || math.Abs(float64(time.Now().Unix()-t)) > 300 {
		return false // missing or outside the 300-second tolerance
	}
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s.%d.", id, t)
	mac.Write(body)
	want := mac.Sum(nil)
	for _, s := range strings.Fields(signatures) {
		v, sig, _ := strings.Cut(s, ",")
		got, err := base64.StdEncoding.DecodeString(sig)
		if v == "v1" && err == nil && hmac.Equal(got, want) { // constant-time comparison
			return true
		}
	}
	return false
}

func main() {
	body, err := io.ReadAll(os.Stdin) // the raw request body, byte for byte
	if err != nil {
		panic(err)
	}
	if !verify(os.Getenv("HERALD_SECRET"), os.Getenv("WEBHOOK_ID"), os.Getenv("WEBHOOK_TIMESTAMP"), os.Getenv("WEBHOOK_SIGNATURE"), body) {
		fmt.Println("invalid")
		os.Exit(1)
	}
	fmt.Println("valid")
}
