package cli

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/service"
	"github.com/toposcope/toposcope/service/store"
)

// newStoreCmd is `toposcope store`: the shared database's schema and
// moving a store's history between bbolt and a database.
func newStoreCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "store",
		Short: "Migrate the shared store's schema, or copy a store's history between bbolt and a database",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newStoreMigrateCmd(env), newStoreCopyCmd(env))
	return cmd
}

func newStoreMigrateCmd(env *Env) *cobra.Command {
	var configPath string
	cmd := &cobra.Command{
		Use:   "migrate --config FILE",
		Short: "Bring the database of store.database to this toposcope's schema",
		Long: `Bring the database that the configuration's store.database names to this
toposcope's schema, under a lock in the database, so that replicas starting at
the same time migrate once. A replica does this itself at start unless
store.database.migrate is "never" (for a database user without the right to
create tables): then run this once, with a user that has it, before the
replicas start. A schema newer than this toposcope's is refused.`,
		Example: `  toposcope store migrate --config /etc/toposcope/config.yaml`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := config.Load(configPath)
			if err != nil {
				return err
			}
			if !cfg.Store.Database.Enabled() {
				return fmt.Errorf("%w: %s sets no store.database.driver: a bbolt store needs no migration", ErrUsage, configPath)
			}
			db, err := service.DatabaseOf(cfg.Store.Database)
			if err != nil {
				return err
			}
			m, err := store.Migrate(cmd.Context(), db)
			if err != nil {
				return err
			}
			if m.From == m.To {
				fmt.Fprintf(env.Stdout, "%s: schema version %d, nothing to do\n", m.Where, m.To)
				return nil
			}
			fmt.Fprintf(env.Stdout, "%s: schema version %d → %d\n", m.Where, m.From, m.To)
			return nil
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "the service's configuration file (its store.database section)")
	_ = cmd.MarkFlagRequired("config")
	return cmd
}

func newStoreCopyCmd(env *Env) *cobra.Command {
	var from, to, configPath string
	cmd := &cobra.Command{
		Use:   "copy --from STORE --to STORE",
		Short: "Copy a store's whole history (snapshots, runs, results, agents' reports, budgets, ledger) into an empty one",
		Long: `Copy every record of one store, with its sequences (snapshot and run IDs go on
where they were), into another that holds no history yet: from the bbolt file
of a single replica into the shared database before scaling out, or back.
Stop the services that use either store first (a bbolt file is held by its
process). A STORE is one of:

  bolt:PATH            a bbolt file
  config               the store the --config file names (store.database, or store.path)
  postgres:file:PATH   PostgreSQL, the DSN read from a file
  postgres:env:NAME    PostgreSQL, the DSN read from an environment variable
  mysql:file:PATH      MariaDB or MySQL, likewise
  mysql:env:NAME
  postgres://...       PostgreSQL by URL (a password there is visible to other
                       users of this machine while the copy runs: prefer file: or env:)

A copy that fails part way leaves records in the destination: empty it (drop
its tables) and copy again.`,
		Example: `  toposcope store copy --from bolt:/var/lib/toposcope/toposcope.db --to postgres:env:TOPOSCOPE_DSN
  toposcope store copy --from config --config /etc/toposcope/config.yaml --to bolt:/backup/toposcope.db`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			src, err := openStoreSpec(cmd.Context(), env, "--from", from, configPath)
			if err != nil {
				return err
			}
			defer func() { _ = src.Close() }()
			dst, err := openStoreSpec(cmd.Context(), env, "--to", to, configPath)
			if err != nil {
				return err
			}
			defer func() { _ = dst.Close() }()
			c, err := store.Copy(cmd.Context(), src, dst)
			if err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "copied %d records (%d snapshots) from %s to %s\n", c.Records, c.Snapshots, src.Path(), dst.Path())
			return nil
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "the store to copy from (see above)")
	cmd.Flags().StringVar(&to, "to", "", "the empty store to copy into (see above)")
	cmd.Flags().StringVar(&configPath, "config", "", "the configuration file that the store \"config\" means")
	_ = cmd.MarkFlagRequired("from")
	_ = cmd.MarkFlagRequired("to")
	return cmd
}

// openStoreSpec opens the store a --from or --to value names. Errors
// name the flag, never a DSN.
func openStoreSpec(ctx context.Context, env *Env, flag, spec, configPath string) (*store.Store, error) {
	switch {
	case strings.HasPrefix(spec, "bolt:"):
		return store.Open(strings.TrimPrefix(spec, "bolt:"), store.Options{})
	case spec == "config":
		if configPath == "" {
			return nil, fmt.Errorf("%w: %s config needs --config", ErrUsage, flag)
		}
		cfg, err := config.Load(configPath)
		if err != nil {
			return nil, err
		}
		if !cfg.Store.Database.Enabled() && cfg.Store.Path == "" {
			return nil, fmt.Errorf("%w: %s config: %s sets neither store.database nor store.path", ErrUsage, flag, configPath)
		}
		return service.OpenStore(ctx, cfg.Store)
	case strings.HasPrefix(spec, "postgres://"), strings.HasPrefix(spec, "postgresql://"):
		fmt.Fprintf(env.Stderr, "warning: %s gives the database's URL on the command line, where other users of this machine can read it; prefer postgres:file: or postgres:env:\n", flag)
		return store.OpenDatabase(ctx, store.Database{Driver: "postgres", DSN: spec})
	}
	driver, source, ok := strings.Cut(spec, ":")
	if !ok || (driver != "postgres" && driver != "mysql") {
		return nil, fmt.Errorf("%w: %s: want bolt:PATH, config, postgres:file:PATH, postgres:env:NAME, mysql:file:PATH or mysql:env:NAME", ErrUsage, flag)
	}
	c := config.DefaultDatabase()
	c.Driver = driver
	switch kind, arg, _ := strings.Cut(source, ":"); {
	case kind == "file" && arg != "":
		c.DSNFile = arg
	case kind == "env" && arg != "":
		c.DSNEnv = arg
		if os.Getenv(arg) == "" {
			return nil, fmt.Errorf("%w: %s: the environment variable %s is empty", ErrUsage, flag, arg)
		}
	default:
		return nil, fmt.Errorf("%w: %s: after %s: want file:PATH or env:NAME", ErrUsage, flag, driver)
	}
	db, err := service.DatabaseOf(c)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	return store.OpenDatabase(ctx, db)
}
