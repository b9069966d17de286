package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/plugins"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/topology"
)

type generateOptions struct {
	registry        *plugins.Registry
	configPath      string
	provider        string
	engine          string
	nodes           string
	providerParams  []string
	engineParams    []string
	failOnUncovered bool
	force           bool
	budgets         string
	// pluginFlags are the flags of the registry's plugins that the
	// command defines; flagsErr is why they could not all be defined.
	pluginFlags []*pluginFlag
	flagsErr    error
}

func newGenerateCmd(env *Env, root *rootOptions) *cobra.Command {
	o := &generateOptions{registry: env.Registry}
	var progressOut func() io.Writer
	cmd := &cobra.Command{
		Use:   "generate",
		Short: "Discover the topology once and publish it through one engine",
		Example: `  toposcope generate --provider sim --model nvl72 --engine slurm --plugin topology/block --slurm-version 24.11
  toposcope generate --model fat-tree-512 --output /tmp/topology.conf
  toposcope generate --config /etc/toposcope/config.yaml
  toposcope generate --provider infiniband --ibnetdiscover-output fabric.txt --engine slurm
  toposcope generate --provider infiniband --ibnetdiscover-command 'ssh head1 ibnetdiscover'
  toposcope generate --model nvl72 --engine k8s-labels --kubeconfig ~/.kube/config --dry-run
  toposcope generate --model nvl72 --engine kueue-budgets --budgets budgets.yaml --engine-param mode=print`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := root.logger(env.Stderr)
			if err != nil {
				return err
			}
			return o.run(cmd, env, log, progressOut())
		},
	}
	progressOut = progressFlag(cmd, env)
	o.addFlags(cmd.Flags())
	return cmd
}

// addFlags defines the command's own flags, then those the plugins
// declare.
func (o *generateOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.configPath, "config", "", "YAML file with provider and engine settings (the service's format)")
	f.StringVar(&o.provider, "provider", "sim", "provider name (see `toposcope providers`)")
	f.StringVar(&o.engine, "engine", "slurm", "engine name (see `toposcope engines`)")
	f.StringVar(&o.nodes, "nodes", "", "only these nodes (a Slurm hostlist, e.g. gpu[001-064])")
	f.StringArrayVar(&o.providerParams, "provider-param", nil, "provider setting KEY=VALUE (repeatable)")
	f.StringArrayVar(&o.engineParams, "engine-param", nil, "engine setting KEY=VALUE (repeatable)")
	f.BoolVar(&o.force, "force", false, "let the sim provider write Slurm's live topology.conf/topology.yaml")
	f.StringVar(&o.budgets, "budgets", "", "engines of the budgets tree (kueue-budgets): the budgets YAML to publish")
	f.BoolVar(&o.failOnUncovered, "fail-on-uncovered", false, "exit 4 when the output leaves nodes out")
	o.definePluginFlags(f, providerSide, engineSide)
}

// run discovers once with the chosen provider and publishes through the
// chosen engine.
func (o *generateOptions) run(cmd *cobra.Command, env *Env, log *slog.Logger, progress io.Writer) error {
	pref, eref, err := o.plugins(cmd)
	if err != nil {
		return err
	}
	p, e, err := o.build(pref, eref, env, log)
	if err != nil {
		return err
	}
	req, err := o.request()
	if err != nil {
		return err
	}
	publish, err := o.publisher(e, eref.Name)
	if err != nil {
		return err
	}
	g, err := during(progress, "discover with "+pref.Name, func() (*topology.Graph, error) { return p.Discover(cmd.Context(), req) })
	if err != nil {
		return fmt.Errorf("discover with %s: %w", pref.Name, err)
	}
	if err := announceReconfigure(cmd.Context(), env.Stderr, e, g); err != nil {
		return err
	}
	_, perr := during(progress, "publish with "+eref.Name, func() (struct{}, error) { return struct{}{}, publish(cmd.Context(), g) })
	return o.published(env.Stderr, e, eref.Name, g, perr)
}

// build makes the provider and the engine, and refuses to let the sim
// provider write Slurm's live file without --force.
func (o *generateOptions) build(pref, eref config.Plugin, env *Env, log *slog.Logger) (providers.Provider, engines.Engine, error) {
	p, err := o.registry.NewProvider(pref.Name, "provider", &pref.Params, providers.Deps{Logger: log.With("provider", pref.Name)})
	if err != nil {
		return nil, nil, err
	}
	e, err := o.registry.NewEngine(eref.Name, "engine", &eref.Params, engines.Deps{Logger: log.With("engine", eref.Name), Stdout: env.Stdout})
	if err != nil {
		return nil, nil, err
	}
	if err := guardLiveOutput(pref.Name, eref, o.force); err != nil {
		return nil, nil, err
	}
	return p, e, nil
}

// published reports the outcome of publishing g through engine e (perr):
// an inexpressible graph, of which nothing was written, with its reason
// alone; otherwise the nodes the output leaves out, on stderr, then the
// error, or ErrUncovered under --fail-on-uncovered.
func (o *generateOptions) published(stderr io.Writer, e engines.Engine, engine string, g *topology.Graph, perr error) error {
	if errors.Is(perr, engines.ErrInexpressible) {
		return fmt.Errorf("publish with %s: %w", engine, perr)
	}
	var uncovered []string
	if cr, ok := e.(engines.CoverageReporter); ok {
		c := cr.Coverage(g)
		uncovered = c.Uncovered
		if len(c.Uncovered) > 0 {
			fmt.Fprintf(stderr, "warning: %d nodes not covered (%s): %s\n",
				len(c.Uncovered), c.Reason, hostlist.Compress(c.Uncovered))
		}
	}
	if perr != nil {
		return fmt.Errorf("publish with %s: %w", engine, perr)
	}
	if o.failOnUncovered && len(uncovered) > 0 {
		return fmt.Errorf("%d nodes: %w", len(uncovered), ErrUncovered)
	}
	return nil
}

// plugins resolves the provider and engine and their parameters: the
// config file first, then the plugins' flags and the -param flags on
// top.
func (o *generateOptions) plugins(cmd *cobra.Command) (config.Plugin, config.Plugin, error) {
	if o.flagsErr != nil {
		return config.Plugin{}, config.Plugin{}, o.flagsErr
	}
	var file config.File
	if o.configPath != "" {
		f, err := config.Load(o.configPath)
		if err != nil {
			return config.Plugin{}, config.Plugin{}, err
		}
		file = *f
	}
	pref, eref := o.chosen(cmd.Flags().Changed, &file)
	if err := applyPluginFlags(cmd.Flags(), o.pluginFlags, &pref, &eref); err != nil {
		return pref, eref, err
	}
	if err := setParams(&pref.Params, "--provider-param", o.providerParams); err != nil {
		return pref, eref, err
	}
	if err := setParams(&eref.Params, "--engine-param", o.engineParams); err != nil {
		return pref, eref, err
	}
	// The config file's paths roots bound the flags' files too.
	check := config.File{Provider: pref, Engines: []config.Plugin{eref}, Paths: file.Paths}
	if err := o.registry.CheckPaths(&check); err != nil {
		return pref, eref, err
	}
	return pref, eref, nil
}

// chosen is the provider and the engine, with the config file's settings
// of them: --provider and --engine choose when given, else the file's
// provider and first engine, else the flags' defaults.
func (o *generateOptions) chosen(changed func(string) bool, file *config.File) (config.Plugin, config.Plugin) {
	pref := file.Provider
	if changed("provider") || pref.Name == "" {
		if pref.Name != o.provider {
			pref = config.Plugin{Name: o.provider}
		}
	}
	eref := config.Plugin{Name: o.engine}
	if !changed("engine") && len(file.Engines) > 0 {
		eref = file.Engines[0]
	}
	for _, e := range file.Engines {
		if changed("engine") && e.Name == o.engine {
			eref = e
		}
	}
	return pref, eref
}

// publisher returns how e publishes: with the --budgets tree for an
// engine of the budgets tree (which needs it), else Publish (which has no
// use for it).
func (o *generateOptions) publisher(e engines.Engine, name string) (func(context.Context, *topology.Graph) error, error) {
	bp, ok := e.(engines.BudgetsPublisher)
	switch {
	case ok && o.budgets == "":
		return nil, fmt.Errorf("%w: engine %s publishes the budgets tree: give --budgets FILE", ErrUsage, name)
	case !ok && o.budgets != "":
		return nil, fmt.Errorf("%w: --budgets: engine %s does not publish the budgets tree", ErrUsage, name)
	case !ok:
		return e.Publish, nil
	}
	pb, err := readYAML(o.budgets, placement.ParseBudgets)
	if err != nil {
		return nil, err
	}
	b, err := plugins.EngineBudgets(pb)
	if err != nil {
		return nil, fmt.Errorf("--budgets %s: %w", o.budgets, err)
	}
	return func(ctx context.Context, g *topology.Graph) error { return bp.PublishBudgets(ctx, g, b) }, nil
}

func setParams(node *yaml.Node, flag string, kvs []string) error {
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return fmt.Errorf("%w: %s %q: want KEY=VALUE", ErrUsage, flag, kv)
		}
		config.SetParam(node, k, v)
	}
	return nil
}

func (o *generateOptions) request() (providers.Request, error) {
	if o.nodes == "" {
		return providers.Request{}, nil
	}
	names, err := hostlist.Expand(o.nodes)
	if err != nil {
		return providers.Request{}, fmt.Errorf("%w: --nodes: %w", ErrUsage, err)
	}
	req := providers.Request{Nodes: make([]providers.NodeRef, len(names))}
	for i, n := range names {
		req.Nodes[i] = providers.NodeRef{Name: n}
	}
	return req, nil
}
