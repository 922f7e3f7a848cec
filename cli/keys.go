package cli

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/store"
)

func (a *app) keyCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "key", Short: "Manage API keys"}
	cmd.AddCommand(a.keyCreateCmd(), a.keyListCmd(), a.keyRevokeCmd())
	return cmd
}

func (a *app) keyCreateCmd() *cobra.Command {
	var name string
	create := &cobra.Command{
		Use:   "create EMAIL --name NAME",
		Short: "Print a new API key for a user (shown once)",
		Args:  needArgs("EMAIL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("name") {
				return fmt.Errorf("missing --name: a label for the key (usage: %s)", cmd.UseLine())
			}
			return a.withUser(cmd, args[0], func(ac *accounts, u *store.User) error {
				_, key, err := ac.svc.CreateAPIKey(cmd.Context(), u.ID, name)
				if err != nil {
					return ruleError(err)
				}
				fmt.Fprintln(a.stdout, key)
				return nil
			})
		},
	}
	create.Flags().StringVar(&name, "name", "", "a label for the key")
	return create
}

func (a *app) keyListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list EMAIL",
		Short: "List a user's active API keys (their ids, names and prefixes; never the keys)",
		Args:  needArgs("EMAIL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withUser(cmd, args[0], func(ac *accounts, u *store.User) error {
				keys, err := ac.st.ListAPIKeys(cmd.Context(), u.ID)
				if err != nil {
					return err
				}
				tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tNAME\tPREFIX\tCREATED\tLAST USED")
				for _, k := range keys {
					used := "never"
					if k.LastUsedAt != nil {
						used = k.LastUsedAt.Format("2006-01-02 15:04")
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", k.ID, k.Name, k.Prefix, k.CreatedAt.Format("2006-01-02 15:04"), used)
				}
				return tw.Flush()
			})
		},
	}
}

func (a *app) keyRevokeCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke an API key by its id (key_...); it stops working at once",
		Example: `  herald key list me@example.com
  herald key revoke key_4Yb0TgCMmJxRcLhZqAvV3e`,
		Args: needArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ac, err := a.openAccounts(cmd.Context())
			if err != nil {
				return err
			}
			defer ac.close()
			id := strings.TrimSpace(args[0])
			k, u, err := ac.st.APIKeyByID(cmd.Context(), id)
			if errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("no active API key with id %s (herald key list EMAIL shows them)", id)
			}
			if err != nil {
				return err
			}
			if err := ac.svc.RevokeAPIKey(cmd.Context(), u.ID, k.ID); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "revoked key %s (%s, %s...) of %s\n", k.ID, k.Name, k.Prefix, u.Email)
			return nil
		},
	}
}
