package cli

import (
	"github.com/spf13/cobra"

	"github.com/toposcope/toposcope/internal/config"
)

func newConfigCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Describe the configuration file",
		Args:  noArgs,
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "schema",
		Short: "Print the JSON Schema of the configuration file",
		Long: `Print the JSON Schema (draft-07) of the configuration file, generated from
the typed configuration: every section and every provider's, engine's
and ledger source's params, with types, enums, defaults and meanings.
A key that a REST request may set is marked "x-toposcope-request": true.

Editors validate a file against it with a first line such as
  # yaml-language-server: $schema=https://raw.githubusercontent.com/toposcope/toposcope/main/docs/config.schema.json
and the Helm chart validates its config value with it.`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error {
			b, err := config.MarshalSchema(env.Registry.ConfigSchema())
			if err != nil {
				return err
			}
			_, err = env.Stdout.Write(b)
			return err
		},
	})
	return cmd
}
