package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/auth"
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
		Args:  cobra.ExactArgs(1),
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
				plan = cfg.DefaultPlan
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
				line, err := bufio.NewReader(a.stdin).ReadString('\n')
				password := strings.TrimRight(line, "\r\n")
				if password == "" {
					return fmt.Errorf("no password on standard input: %v", err)
				}
				if u.PasswordHash, err = auth.HashPassword(ctx, password); err != nil {
					return err
				}
			}
			if err := st.CreateUser(ctx, u); errors.Is(err, store.ErrConflict) {
				return fmt.Errorf("a user with email %s already exists", email)
			} else if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "created user %s (%s, plan %s)\n", u.ID, u.Email, u.Plan)
			return nil
		},
	}
	add.Flags().StringVar(&name, "name", "", "display name")
	add.Flags().BoolVar(&admin, "admin", false, "make the user an administrator")
	add.Flags().BoolVar(&passwordStdin, "password-stdin", false, "read a password for local sign-in from standard input")
	add.Flags().StringVar(&plan, "plan", "", "plan: free or pro (default: default_plan from the config)")

	list := &cobra.Command{
		Use:   "list",
		Short: "List users",
		Args:  cobra.NoArgs,
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
		Args:  cobra.ExactArgs(2),
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
		Args:  cobra.ExactArgs(1),
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
	cmd.AddCommand(add, list, setPlan, del)
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
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.TrimSpace(name) == "" {
				return fmt.Errorf("--name is required")
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
	cmd.AddCommand(create)
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
		Args: cobra.NoArgs,
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
		Args:  cobra.ExactArgs(1),
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
