package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/toposcope/toposcope/app"
	"github.com/toposcope/toposcope/internal/config"
)

type serveOptions struct {
	configPath string
	listen     string
	storePath  string
	model      string
	interval   time.Duration
	allowRoot  bool
	advertise  string
}

func newServeCmd(env *Env, root *rootOptions) *cobra.Command {
	o := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the REST service: discover, keep the topology current, publish it and answer queries",
		Long: `serve runs toposcope as a service. With no --config it serves the bundled
default model (sim provider, small-tree) on ` + config.DefaultListen + ` and publishes
nothing; the configuration file adds engines, a discovery interval and
triggers, the store, tokens and TLS (see docs/service.md and docs/api.md).`,
		Example: `  toposcope serve
  toposcope serve --model nvl72 --listen 127.0.0.1:8080
  toposcope serve --config /etc/toposcope/config.yaml`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ro := *root
			if f := cmd.Flag("log-level"); f == nil || !f.Changed {
				ro.Level = "info" // a service logs what it does
			}
			log, err := ro.logger(env.Stderr)
			if err != nil {
				return err
			}
			cfg, err := o.config(cmd)
			if err != nil {
				return err
			}
			if err := checkUser(env.Geteuid(), o.allowRoot); err != nil {
				return err
			}
			return app.Serve(cmd.Context(), cfg, app.ServeDeps{Registry: env.Registry, Logger: log, Stdout: env.Stdout, Version: Version()})
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.configPath, "config", "", "YAML configuration file (provider, engines, server, discovery, store)")
	f.StringVar(&o.listen, "listen", "", "host:port to listen on (default "+config.DefaultListen+"; port 0 picks a free one)")
	f.StringVar(&o.storePath, "store", "", "store file (default $XDG_STATE_HOME/toposcope/toposcope.db; without --config, quickstart-MODEL.db there)")
	f.StringVar(&o.model, "model", "", "sim provider: bundled model name or model file path")
	f.DurationVar(&o.interval, "interval", 0, "time between discoveries (overrides discovery.interval)")
	f.StringVar(&o.advertise, "advertise-url", "", "this replica's API URL as the other replicas reach it (overrides kubernetes.leaderElection.advertiseURL; in a pod: http://$(POD_IP):49021)")
	f.BoolVar(&o.allowRoot, "allow-root", false, "run as root (refused otherwise: the service needs no more than its store, the files it writes, and a Slurm operator account for reconfigure)")
	return cmd
}

// config loads the file (or the defaults) and applies the flags.
func (o *serveOptions) config(cmd *cobra.Command) (*config.File, error) {
	cfg := config.Default()
	if o.configPath != "" {
		var err error
		if cfg, err = config.Load(o.configPath); err != nil {
			return nil, err
		}
	}
	if cfg.Provider.Name == "" {
		cfg.Provider = app.DefaultProvider()
	}
	changed := cmd.Flags().Changed
	if changed("model") {
		config.SetParam(&cfg.Provider.Params, "model", o.model)
	}
	if changed("listen") {
		cfg.Server.Listen = o.listen
	}
	if changed("store") {
		cfg.Store.Path = o.storePath
	}
	if changed("interval") {
		cfg.Discovery.Interval = o.interval
	}
	if changed("advertise-url") {
		cfg.Kubernetes.LeaderElection.AdvertiseURL = o.advertise
	}
	if err := cfg.Server.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	if err := cfg.Discovery.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	if cfg.Store.Path == "" {
		cfg.Store.Path = defaultStorePath("toposcope.db")
		if o.configPath == "" {
			// The quickstart (no --config) keeps a store of its own per
			// model, so that it never trips over an earlier run's state.
			cfg.Store.Path = defaultStorePath("quickstart-" + quickstartName(cfg) + ".db")
		}
	}
	return cfg, nil
}

// quickstartName is the configured sim model's name, made safe for a
// file name.
func quickstartName(cfg *config.File) string {
	var p struct {
		Model string `yaml:"model"`
	}
	_ = cfg.Provider.Params.Decode(&p)
	name := strings.TrimSuffix(filepath.Base(p.Model), filepath.Ext(p.Model))
	name = strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, name)
	if name == "" || name == "." {
		return "default"
	}
	return name
}

func defaultStorePath(file string) string {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = os.TempDir()
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "toposcope", file)
}

// ErrRoot is returned when serve would run as root without --allow-root.
var ErrRoot = errors.New("toposcope serve refuses to run as root")

// checkUser refuses euid 0 unless allowRoot: the service writes a
// topology file and its store, and reaches Slurm and Kubernetes with
// their own credentials; none of that needs root (see docs/service.md).
func checkUser(euid int, allowRoot bool) error {
	if euid != 0 || allowRoot {
		return nil
	}
	return usageError{fmt.Errorf("%w: run it as a dedicated user that may write its store and the topology file "+
		"(a Slurm operator, e.g. `sacctmgr add user toposcope adminlevel=operator`, for scontrol reconfigure), "+
		"or pass --allow-root", ErrRoot)}
}

// usageError makes its error a command-line one (ErrUsage, exit 2)
// without adding a word to its message.
type usageError struct{ error }

// Unwrap returns the error and ErrUsage.
func (e usageError) Unwrap() []error { return []error{e.error, ErrUsage} }
