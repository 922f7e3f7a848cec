package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/service"
	"github.com/heraldhq/herald/store"
)

func (a *app) keyCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "key", Short: "Manage API keys"}
	var name string
	create := &cobra.Command{
		Use:   "create EMAIL --name NAME",
		Short: "Print a new API key for a user (shown once)",
		Args:  needArgs("EMAIL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.TrimSpace(name) == "" {
				return fmt.Errorf("missing --name: a label for the key (usage: %s)", cmd.UseLine())
			}
			return a.withUser(cmd, args[0], func(st *store.Store, u *store.User) error {
				_, key, err := service.New(st, service.Options{}).CreateAPIKey(cmd.Context(), u.ID, name)
				if err != nil {
					return err
				}
				fmt.Fprintln(a.stdout, key)
				return nil
			})
		},
	}
	create.Flags().StringVar(&name, "name", "", "a label for the key")
	cmd.AddCommand(create, a.keyListCmd(), a.keyRevokeCmd())
	return cmd
}

func (a *app) vacuumCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "vacuum",
		Short: "Rebuild the database file at its smallest; stop the server first",
		Long: `Rebuilds the database file, giving every free page back to the file
system, and turns on incremental reclaiming for a database made by an older
Herald (newer ones reclaim space after each sweep by themselves). It needs
the database to itself, about a few seconds per gigabyte: while a server runs
on it, the command refuses and changes nothing (the server holds a lock on
herald.db.lock beside the database). It prints the size before and after,
the database's write-ahead log (herald.db-wal) included.`,
		Args: needArgs(),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := a.loadConfig()
			if err != nil {
				return err
			}
			if cfg.Database.URL == "" {
				release, err := lockDatabase(cfg.DBPath(), true)
				if errors.Is(err, errDatabaseHeld) {
					return fmt.Errorf("a Herald server is running on %s: stop it first, then run herald vacuum again (nothing was changed): %w", cfg.DBPath(), err)
				} else if err != nil {
					return err
				}
				defer release()
			}
			st, err := openStore(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			defer st.Close()
			before := databaseSize(cfg.DBPath())
			if err := st.Vacuum(cmd.Context()); err != nil {
				return err
			}
			after := databaseSize(cfg.DBPath())
			fmt.Fprintf(a.stdout, "vacuumed %s: %d -> %d bytes (the database and its write-ahead log)\n", cfg.DBPath(), before, after)
			return nil
		},
	}
}

// databaseSize is what a SQLite database takes on disk: its file and its
// write-ahead log, where committed pages wait for a checkpoint.
func databaseSize(path string) int64 {
	var n int64
	for _, p := range []string{path, path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			n += fi.Size()
		}
	}
	return n
}

func (a *app) backupCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "backup FILE",
		Short: "Write a consistent copy of the database, also while the server runs",
		Args:  needArgs("FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, st, err := a.openStore(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			if err := st.Backup(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "backup written to %s\n", args[0])
			return nil
		},
	}
}
