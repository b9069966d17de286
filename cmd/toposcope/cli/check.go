package cli

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"

	"github.com/toposcope/toposcope/app"
	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/providers"
)

// newCheckCmd returns `toposcope check`: validate a configuration file
// the way `serve` does when it starts (keys, types, values, paths roots)
// and build its provider, engines and ledger sources, without discovering,
// publishing or opening the store.
func newCheckCmd(env *Env) *cobra.Command {
	var path string
	cmd := &cobra.Command{
		Use:     "check",
		Short:   "Validate a configuration file and build its plugins, without running them",
		Example: `  toposcope check --config /etc/toposcope/config.yaml`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := config.Load(path)
			if err != nil {
				return err
			}
			if cfg.Provider.Name == "" { // as serve does
				cfg.Provider = app.DefaultProvider()
			}
			if err := env.Registry.CheckPaths(cfg); err != nil {
				return err
			}
			quiet := slog.New(slog.DiscardHandler)
			if _, err := env.Registry.NewProvider(cfg.Provider.Name, "provider", &cfg.Provider.Params, providers.Deps{Logger: quiet}); err != nil {
				return err
			}
			names := make([]string, 0, len(cfg.Engines))
			for i := range cfg.Engines {
				e := &cfg.Engines[i]
				if _, err := env.Registry.NewEngine(e.Name, fmt.Sprintf("engines[%d]", i), &e.Params, engines.Deps{Logger: quiet}); err != nil {
					return err
				}
				names = append(names, e.Name)
			}
			for i := range cfg.Placement.Sources {
				s := &cfg.Placement.Sources[i]
				if _, err := env.Registry.NewLedgerSource(s.Name, fmt.Sprintf("placement.sources[%d]", i), &s.Params, placement.SourceDeps{Logger: quiet}); err != nil {
					return err
				}
			}
			if len(names) == 0 {
				names = append(names, "none")
			}
			fmt.Fprintf(env.Stdout, "%s: valid (provider %s; engines %s)\n", path, cfg.Provider.Name, strings.Join(names, ", "))
			return nil
		},
	}
	cmd.Flags().StringVar(&path, "config", "", "YAML configuration file (the service's format)")
	_ = cmd.MarkFlagRequired("config")
	return cmd
}
