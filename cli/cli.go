// Command herald is a self-hosted notification server: scripts send with one
// curl call, people answer from their phones, the answer comes back signed.
// This file wires the cobra commands; the work lives in the packages.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/store"
)

// Set at build time with -ldflags "-X main.version=... -X main.commit=...".
var (
	version = "dev"
	commit  = ""
)

func main() {
	err := newRoot(os.Stdin, os.Stdout, os.Stderr, os.Getenv).Execute()
	code, printIt := exitCode(err)
	if printIt {
		fmt.Fprintln(os.Stderr, "herald:", err)
	}
	os.Exit(code)
}

// app is what every command shares: where it reads and writes, and how it
// finds its configuration.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	configPath     string
}

func newRoot(stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) *cobra.Command {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv}
	root := &cobra.Command{
		Use:           "herald",
		Short:         "Self-hosted notifications with interactive, signed answers",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.PersistentFlags().StringVar(&a.configPath, "config", "", "config file (default ./herald.toml if it exists, else built-in defaults)")
	root.AddCommand(a.serveCmd(), a.userCmd(), a.keyCmd(), a.backupCmd(), a.vacuumCmd(), a.migrateDataCmd(), a.sendCmd(), a.versionCmd())
	root.AddCommand(a.listenCmds()...)
	return root
}

// loadConfig reads --config, else ./herald.toml when present, else defaults.
func (a *app) loadConfig() (config.Config, error) {
	path := a.configPath
	if path == "" {
		if _, err := os.Stat("herald.toml"); err == nil {
			path = "herald.toml"
		}
	}
	return config.Load(path, a.getenv)
}

// openStore loads the configuration and opens its database.
func (a *app) openStore(ctx context.Context) (config.Config, *store.Store, error) {
	cfg, err := a.loadConfig()
	if err != nil {
		return cfg, nil, err
	}
	st, err := openStore(ctx, cfg)
	return cfg, st, err
}

// cliBusyTimeout is how long a CLI command waits for the server's writes:
// they are short (sweeps go in small batches), so a command beside a busy
// server waits its turn instead of failing with "database is locked".
const cliBusyTimeout = time.Minute

func openStore(ctx context.Context, cfg config.Config) (*store.Store, error) {
	return store.Open(ctx, cfg.DatabaseDSN(), store.Options{Synchronous: cfg.Database.Synchronous, BusyTimeout: cliBusyTimeout})
}

func newLogger(cfg config.Config, w io.Writer) *slog.Logger {
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.LogLevel)); err != nil {
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

func (a *app) versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print version, commit and Go version",
		Args:  needArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			info, _ := debug.ReadBuildInfo()
			c := buildCommit(commit, info)
			if c == "" {
				c = "unknown: built without VCS information (go run, -buildvcs=false, or outside a git checkout)"
			}
			fmt.Fprintf(a.stdout, "herald %s (commit %s, %s, %s/%s)\n", buildVersion(version, info), c, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}
