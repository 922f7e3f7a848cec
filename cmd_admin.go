package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/service"
	"github.com/heraldhq/herald/store"
)

func validPlan(plan string) error {
	if plan != config.PlanFree && plan != config.PlanPro {
		return fmt.Errorf("plan must be free or pro, got %q", plan)
	}
	return nil
}

func (a *app) userCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "user", Short: "Manage users"}

	var name, plan string
	var admin, passwordStdin bool
	add := &cobra.Command{
		Use:   "add EMAIL",
		Short: "Create a user",
		Long: `Creates a user. With --password-stdin the first line of standard input is
the user's password for local sign-in; without it the user can sign in only
through an OIDC provider until you set one with "herald user passwd EMAIL".

Without --plan the user gets the pro plan: an account the operator makes by
hand is trusted, and the free plan's 5 sends a minute per channel would
throttle a homelab's own scripts. Users who sign up through a provider get
default_plan.`,
		Example: `  echo 'correct horse battery' | herald user add me@example.com --name Me --password-stdin
  herald user add friend@example.com --plan free`,
		Args: needArgs("EMAIL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			email := strings.TrimSpace(args[0])
			if !strings.Contains(email, "@") {
				return fmt.Errorf("%q is not an email address", email)
			}
			cfg, err := a.loadConfig()
			if err != nil {
				return err
			}
			if plan == "" {
				plan = addUserPlan
			}
			if err := validPlan(plan); err != nil {
				return err
			}
			st, err := openStore(ctx, cfg)
			if err != nil {
				return err
			}
			defer st.Close()
			u := &store.User{Email: email, Name: name, Plan: plan, IsAdmin: admin}
			if passwordStdin {
				if u.PasswordHash, err = a.readPasswordHash(ctx); err != nil {
					return err
				}
			}
			if err := st.CreateUser(ctx, u); errors.Is(err, store.ErrConflict) {
				return fmt.Errorf("a user with email %s already exists", email)
			} else if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "created user %s (%s, plan %s)\n", u.ID, u.Email, planSummary(cfg, u.Plan))
			if !passwordStdin {
				fmt.Fprintf(a.stderr, "warning: %s has no password and cannot sign in with one; set it with: herald user passwd %s (reads it from standard input)\n", u.Email, u.Email)
			}
			return nil
		},
	}
	add.Flags().StringVar(&name, "name", "", "display name")
	add.Flags().BoolVar(&admin, "admin", false, "make the user an administrator")
	add.Flags().BoolVar(&passwordStdin, "password-stdin", false, "read a password for local sign-in from standard input")
	add.Flags().StringVar(&plan, "plan", "", "plan: free or pro (default pro; sign-ups through a provider get default_plan)")

	passwd := &cobra.Command{
		Use:   "passwd EMAIL",
		Short: "Set a user's password from the first line of standard input; ends their sessions",
		Example: `  echo 'new passphrase' | herald user passwd me@example.com
  herald user passwd me@example.com < password.txt`,
		Args: needArgs("EMAIL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withUser(cmd, args[0], func(st *store.Store, u *store.User) error {
				hash, err := a.readPasswordHash(cmd.Context())
				if err != nil {
					return err
				}
				if err := st.SetUserPassword(cmd.Context(), u.ID, hash, ""); err != nil {
					return err
				}
				fmt.Fprintf(a.stdout, "password of %s set; their sessions are ended (API keys stay)\n", u.Email)
				return nil
			})
		},
	}

	list := &cobra.Command{
		Use:   "list",
		Short: "List users",
		Args:  needArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, st, err := a.openStore(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			users, err := st.ListUsers(cmd.Context())
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tEMAIL\tNAME\tPLAN\tADMIN\tCREATED")
			for _, u := range users {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%v\t%s\n", u.ID, u.Email, u.Name, u.Plan, u.IsAdmin, u.CreatedAt.Format("2006-01-02 15:04"))
			}
			return tw.Flush()
		},
	}

	setPlan := &cobra.Command{
		Use:   "set-plan EMAIL PLAN",
		Short: "Change a user's plan (takes effect on their next request)",
		Args:  needArgs("EMAIL", "PLAN"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := validPlan(args[1]); err != nil {
				return err
			}
			return a.withUser(cmd, args[0], func(st *store.Store, u *store.User) error {
				if err := st.SetUserPlan(cmd.Context(), u.ID, args[1]); err != nil {
					return err
				}
				fmt.Fprintf(a.stdout, "user %s is now on plan %s\n", u.Email, args[1])
				return nil
			})
		},
	}

	del := &cobra.Command{
		Use:   "delete EMAIL",
		Short: "Delete a user and everything they own",
		Args:  needArgs("EMAIL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withUser(cmd, args[0], func(st *store.Store, u *store.User) error {
				if err := st.DeleteUser(cmd.Context(), u.ID); err != nil {
					return err
				}
				fmt.Fprintf(a.stdout, "deleted user %s (%s)\n", u.Email, u.ID)
				return nil
			})
		},
	}
	cmd.AddCommand(add, passwd, list, setPlan, del)
	return cmd
}

// withUser opens the store, finds the user by email and runs fn.
func (a *app) withUser(cmd *cobra.Command, email string, fn func(*store.Store, *store.User) error) error {
	_, st, err := a.openStore(cmd.Context())
	if err != nil {
		return err
	}
	defer st.Close()
	u, err := st.UserByEmail(cmd.Context(), email)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no user with email %s", email)
	}
	if err != nil {
		return err
	}
	return fn(st, u)
}

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
