// Package cli is Herald's command line: one cobra command tree, one file
// per command group (serve, user, key, send/wait/listen, backup/vacuum/
// migrate-data, version). The commands parse flags, build parts and run
// them; every rule they apply is service's, and every write goes through
// it. main calls Main; tests build the tree with NewRoot.
package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/store"
)

// Build is what the binary was stamped with at build time (main's
// -ldflags "-X main.version=... -X main.commit=..."); empty fields are
// read from the build information the go command records.
type Build struct {
	Version, Commit string
}

// Main runs the command line in os.Args with the process's standard
// streams and environment, and returns the status the process exits with.
func Main(b Build) int {
	err := NewRoot(os.Stdin, os.Stdout, os.Stderr, os.Getenv, b).Execute()
	code, printIt := exitCode(err)
	if printIt {
		fmt.Fprintln(os.Stderr, "herald:", err)
	}
	return code
}

// app is what every command shares: where it reads and writes, and how it
// finds its configuration.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	configPath     string
	build          Build
}

// NewRoot returns the herald command with its subcommands, reading stdin,
// writing stdout and stderr, and looking up the environment with getenv.
func NewRoot(stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string, b Build) *cobra.Command {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv, build: b}
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
