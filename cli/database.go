package cli

import (
	"errors"
	"fmt"
	"net/url"
	"os"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/pgcopy"
)

func (a *app) migrateDataCmd() *cobra.Command {
	var from, to string
	cmd := &cobra.Command{
		Use:   "migrate-data --from FILE --to URL",
		Short: "Copy a SQLite database (herald.db) into an empty PostgreSQL database",
		Long: `Copies every row of a SQLite Herald database into an empty PostgreSQL
database, in one transaction: all of it or nothing. Ids are kept, so API keys,
sessions, webhook URLs, devices and live streams' positions carry over.

Stop the server first: the SQLite file is opened read-only, and what a running
server writes during the copy would be missing from it.

The SQLite file must be at the schema version of this herald: run this herald
on it once first (opening the file migrates it). The PostgreSQL database must
hold no Herald data: its schema is created here if needed. The role in the URL
must own the tables (the copy turns their triggers off meanwhile): the role
Herald itself connects as, which creates them, does.

The search index is not copied: the server rebuilds it in the background once
it runs, and search finds older messages as it catches up.`,
		Example: `  herald migrate-data --from /var/lib/herald/herald.db --to postgres://herald:secret@db.lan/herald`,
		Args:    needArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if from == "" || to == "" {
				return fmt.Errorf("both --from (the SQLite file) and --to (the PostgreSQL URL) are needed (usage: %s)", cmd.UseLine())
			}
			if err := pgcopy.CheckEnds(from, to); err != nil {
				return err
			}
			src, err := pgcopy.OpenSource(ctx, from)
			if err != nil {
				return err
			}
			defer src.Close()
			dst, err := store.Open(ctx, to, store.Options{BusyTimeout: cliBusyTimeout})
			if err != nil {
				return err
			}
			defer dst.Close()
			copied, err := pgcopy.Copy(ctx, dst, src)
			var full pgcopy.ErrTargetNotEmpty
			if errors.As(err, &full) {
				return fmt.Errorf("%w; nothing was copied", err)
			} else if err != nil {
				return err
			}
			a.printCopied(from, to, copied)
			return nil
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "the SQLite database file to copy (herald.db in data_dir)")
	cmd.Flags().StringVar(&to, "to", "", "the PostgreSQL database to copy into, as a URL (postgres://...)")
	return cmd
}

func (a *app) printCopied(from, to string, copied []pgcopy.TableCopy) {
	name := "the PostgreSQL database"
	if u, err := url.Parse(to); err == nil {
		name = u.Redacted()
	}
	fmt.Fprintf(a.stdout, "copied %s to %s, rows per table:\n", from, name)
	var total int64
	for _, c := range copied {
		fmt.Fprintf(a.stdout, "  %-22s %10d\n", c.Table, c.Rows)
		total += c.Rows
	}
	fmt.Fprintf(a.stdout, "  %-22s %10d\n", "in all", total)
	fmt.Fprintf(a.stdout, `
The search index starts empty: the server rebuilds it in the background once it
runs, and search finds older messages as it catches up.

Next:
  1. Point Herald at the database: set [database] url in herald.toml (or
     HERALD_DATABASE_URL) to the --to URL, on every replica.
  2. Start the server, or the replicas.
  3. Keep %s as it is, as a backup, until you trust the new setup.
`, from)
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
