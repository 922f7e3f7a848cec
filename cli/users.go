package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/config"
	"github.com/heraldhq/herald/service"
	"github.com/heraldhq/herald/store"
)

// readPassword reads a password from the first line of standard input. The
// rules a password must meet are the service's, as over HTTP; a missing or
// empty first line is no password at all, and said so.
func (a *app) readPassword() (string, error) {
	line, err := bufio.NewReader(a.stdin).ReadString('\n')
	password := strings.TrimRight(line, "\r\n")
	if password == "" {
		if err != nil {
			return "", fmt.Errorf("no password on standard input (give it on the first line): %v", err)
		}
		return "", errors.New("no password on standard input: the first line is empty")
	}
	return password, nil
}

// ruleError is how the command line shows a refusal of the rules: the
// service's message, the same words the API answers with.
func ruleError(err error) error {
	var se *service.Error
	if errors.As(err, &se) {
		return errors.New(se.Message)
	}
	return err
}

func (a *app) userCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "user", Short: "Manage users"}
	cmd.AddCommand(a.userAddCmd(), a.userPasswdCmd(), a.userListCmd(), a.userSetPlanCmd(), a.userSetAdminCmd(), a.userDeleteCmd())
	return cmd
}

func (a *app) userAddCmd() *cobra.Command {
	var name, plan string
	var admin, passwordStdin bool
	add := &cobra.Command{
		Use:   "add EMAIL",
		Short: "Create a user (the first user of a server is its administrator)",
		Long: `Creates a user. With --password-stdin the first line of standard input is
the user's password for local sign-in (8 to 256 characters); without it the
user can sign in only through an OIDC provider until you set one with
"herald user passwd EMAIL".

The first user of a server with no users is an administrator, with or
without --admin: the admin pages (Users, Server) need one. Make others
administrators with --admin or "herald user set-admin EMAIL".

Without --plan the user gets the pro plan: an account the operator makes by
hand is trusted, and the free plan's 5 sends a minute per channel would
throttle a homelab's own scripts. Users who sign up through a provider get
default_plan.`,
		Example: `  echo 'correct horse battery' | herald user add me@example.com --name Me --password-stdin
  herald user add friend@example.com --plan free`,
		Args: needArgs("EMAIL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if plan == "" {
				plan = addUserPlan
			}
			return a.userAdd(cmd.Context(), service.NewUser{Email: args[0], Name: name, Plan: plan, Admin: admin, NoPassword: !passwordStdin})
		},
	}
	add.Flags().StringVar(&name, "name", "", "display name")
	add.Flags().BoolVar(&admin, "admin", false, "make the user an administrator (the first user of a server is one anyway)")
	add.Flags().BoolVar(&passwordStdin, "password-stdin", false, "read a password for local sign-in (8 to 256 characters) from standard input")
	add.Flags().StringVar(&plan, "plan", "", "plan: free or pro (default pro; sign-ups through a provider get default_plan)")
	return add
}

// userAdd creates the user in, reading its password from standard input
// unless in.NoPassword, and says what it made.
func (a *app) userAdd(ctx context.Context, in service.NewUser) error {
	if !in.NoPassword {
		var err error
		if in.Password, err = a.readPassword(); err != nil {
			return err
		}
	}
	ac, err := a.openAccounts(ctx)
	if err != nil {
		return err
	}
	defer ac.close()
	u, err := ac.svc.CreateUser(ctx, in)
	if err != nil {
		return ruleError(err)
	}
	fmt.Fprintf(a.stdout, "created user %s (%s, plan %s)\n", u.ID, u.Email, planSummary(ac.cfg, u.Plan))
	switch {
	case u.IsAdmin && !in.Admin:
		fmt.Fprintf(a.stdout, "%s is an administrator: the first user of this server is one (the web UI shows it the Users and Server pages)\n", u.Email)
	case u.IsAdmin:
		fmt.Fprintf(a.stdout, "%s is an administrator\n", u.Email)
	}
	if in.NoPassword {
		fmt.Fprintf(a.stderr, "warning: %s has no password and cannot sign in with one; set it with: herald user passwd %s (reads it from standard input)\n", u.Email, u.Email)
	}
	return nil
}

func (a *app) userPasswdCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "passwd EMAIL",
		Short: "Set a user's password (8 to 256 characters) from the first line of standard input; ends their sessions",
		Example: `  echo 'new passphrase' | herald user passwd me@example.com
  herald user passwd me@example.com < password.txt`,
		Args: needArgs("EMAIL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withUser(cmd, args[0], func(ac *accounts, u *store.User) error {
				password, err := a.readPassword()
				if err != nil {
					return err
				}
				if err := ac.svc.ResetPassword(cmd.Context(), u.ID, password); err != nil {
					return ruleError(err)
				}
				fmt.Fprintf(a.stdout, "password of %s set; their sessions are ended (API keys stay)\n", u.Email)
				return nil
			})
		},
	}
}

func (a *app) userListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List users",
		Args:  needArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ac, err := a.openAccounts(cmd.Context())
			if err != nil {
				return err
			}
			defer ac.close()
			users, err := ac.st.ListUsers(cmd.Context())
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
}

func (a *app) userSetPlanCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "set-plan EMAIL PLAN",
		Short: "Change a user's plan (takes effect on their next request)",
		Args:  needArgs("EMAIL", "PLAN"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withUser(cmd, args[0], func(ac *accounts, u *store.User) error {
				if err := ac.svc.SetPlan(cmd.Context(), u.ID, args[1]); err != nil {
					return ruleError(err)
				}
				fmt.Fprintf(a.stdout, "user %s is now on plan %s\n", u.Email, args[1])
				return nil
			})
		},
	}
}

func (a *app) userSetAdminCmd() *cobra.Command {
	var off bool
	cmd := &cobra.Command{
		Use:   "set-admin EMAIL [--off]",
		Short: "Make a user an administrator, or with --off no longer one (takes effect on their next request)",
		Long: `Makes a user an administrator: the admin pages (Users, Server) and the
/v1/admin API open to them. With --off the user is no longer one, unless they
are the only administrator: make another user one first, so that someone can
still reach the admin pages.`,
		Example: `  herald user set-admin me@example.com
  herald user set-admin former@example.com --off`,
		Args: needArgs("EMAIL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withUser(cmd, args[0], func(ac *accounts, u *store.User) error {
				err := ac.svc.SetAdmin(cmd.Context(), nil, u.ID, !off)
				var se *service.Error
				if errors.As(err, &se) {
					return fmt.Errorf("%s: %s (herald user set-admin OTHER_EMAIL)", u.Email, se.Message)
				} else if err != nil {
					return err
				}
				if off {
					fmt.Fprintf(a.stdout, "%s is no longer an administrator\n", u.Email)
				} else {
					fmt.Fprintf(a.stdout, "%s is now an administrator\n", u.Email)
				}
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&off, "off", false, "revoke the administrator role instead of granting it")
	return cmd
}

func (a *app) userDeleteCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "delete EMAIL",
		Short: "Delete a user and everything they own",
		Args:  needArgs("EMAIL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withUser(cmd, args[0], func(ac *accounts, u *store.User) error {
				if err := ac.svc.DeleteUser(cmd.Context(), nil, u.ID); err != nil {
					return ruleError(err)
				}
				fmt.Fprintf(a.stdout, "deleted user %s (%s)\n", u.Email, u.ID)
				return nil
			})
		},
	}
}

// accounts is what the user and key commands work with: the configured
// database, read directly, and the rules over it, through which every
// change goes, as the API's do.
type accounts struct {
	cfg config.Config
	st  *store.Store
	svc *service.Service
}

// openAccounts loads the configuration and opens its database.
func (a *app) openAccounts(ctx context.Context) (*accounts, error) {
	cfg, st, err := a.openStore(ctx)
	if err != nil {
		return nil, err
	}
	return &accounts{cfg: cfg, st: st, svc: service.New(st, service.OptionsFrom(cfg))}, nil
}

func (ac *accounts) close() { ac.st.Close() }

// withUser opens the accounts, finds the user by email and runs fn.
func (a *app) withUser(cmd *cobra.Command, email string, fn func(*accounts, *store.User) error) error {
	ac, err := a.openAccounts(cmd.Context())
	if err != nil {
		return err
	}
	defer ac.close()
	u, err := ac.st.UserByEmail(cmd.Context(), email)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no user with email %s", email)
	}
	if err != nil {
		return err
	}
	return fn(ac, u)
}
