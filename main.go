// Command herald is a self-hosted notification server: scripts send with one
// curl call, people answer from their phones, the answer comes back signed.
// The commands live in package cli; this file only starts them.
package main

import (
	"os"

	"github.com/heraldhq/herald/cli"
)

// Set at build time with -ldflags "-X main.version=... -X main.commit=...".
var (
	version = "dev"
	commit  = ""
)

func main() {
	os.Exit(cli.Main(cli.Build{Version: version, Commit: commit}))
}
