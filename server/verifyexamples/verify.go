// Command verify checks a Herald callback signature.
//
//	HERALD_SECRET=whsec_... HERALD_SIGNATURE='t=...,v1=...' go run verify.go < body.json
package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
)

// verify reports whether header is a valid signature of body under secret.
func verify(secret, header string, body []byte) bool {
	var t int64 = -1
	var sigs []string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			t, _ = strconv.ParseInt(v, 10, 64)
		case "v1":
			sigs = append(sigs, v)
		}
	}
	if t < 0 || math.Abs(float64(time.Now().Unix()-t)) > 300 {
		return false // missing or outside the 300-second tolerance
	}
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "%d.", t)
	mac.Write(body)
	want := mac.Sum(nil)
	for _, s := range sigs {
		got, err := hex.DecodeString(s)
		if err == nil && hmac.Equal(got, want) { // constant-time comparison
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
	if !verify(os.Getenv("HERALD_SECRET"), os.Getenv("HERALD_SIGNATURE"), body) {
		fmt.Println("invalid")
		os.Exit(1)
	}
	fmt.Println("valid")
}
