package main

import (
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
Herald (newer ones reclaim space after each sweep by themselves). It holds
the database while it runs, about a few seconds per gigabyte: stop the
server first, or its writes wait.`,
		Args: needArgs(),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, st, err := a.openStore(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			before, _ := fileSize(cfg.DBPath())
			if err := st.Vacuum(cmd.Context()); err != nil {
				return err
			}
			after, _ := fileSize(cfg.DBPath())
			fmt.Fprintf(a.stdout, "vacuumed %s: %d -> %d bytes\n", cfg.DBPath(), before, after)
			return nil
		},
	}
}

func fileSize(path string) (int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
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
