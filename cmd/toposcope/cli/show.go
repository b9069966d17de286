package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/topology"
	"github.com/toposcope/toposcope/topology/outline"
)

// maxGraphBytes caps the graph read from a service (a 100,000-node graph
// is about 20 MB).
const maxGraphBytes = 1 << 30

type showOptions struct {
	generateOptions
	server      string
	tokenFile   string
	depth       int
	maxChildren int
	node        string
	listNodes   bool
	format      string
	timeout     time.Duration
	out         *outputFlags
}

// newShowCmd returns `toposcope show`: the switch tree in a terminal,
// aggregated, from a model, a configuration's provider or a running
// service.
func newShowCmd(env *Env, root *rootOptions) *cobra.Command {
	o := &showOptions{generateOptions: generateOptions{registry: env.Registry}}
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Draw the switch tree, aggregated, from a model, a provider or a running service",
		Example: `  toposcope show
  toposcope show --model fat-tree-512 --depth 2
  toposcope show --model fat-100k.yaml --node gpu012345
  toposcope show --config /etc/toposcope/config.yaml --nodes-list --max-children 8
  toposcope show --server https://head01:49021 --token-file /etc/toposcope/read.token
  toposcope show --model nvl72 -o dot | dot -Tsvg > nvl72.svg
  toposcope show --server https://head01:49021 -o yaml`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := o.outputFormat(cmd)
			if err != nil {
				return err
			}
			if o.depth < 0 || o.maxChildren < 0 {
				return fmt.Errorf("%w: --depth and --max-children must not be negative", ErrUsage)
			}
			g, err := o.graph(cmd, env, root)
			if err != nil {
				return err
			}
			if format == outJSON || format == outYAML {
				return writeData(env.Stdout, format, g)
			}
			sum := topology.Summarize(g)
			switch {
			case o.node != "":
				found, err := outline.WritePath(env.Stdout, sum, o.node)
				if err == nil && !found {
					err = fmt.Errorf("%w: --node %q: no such node in the topology", ErrUsage, o.node)
				}
				return err
			case format == "dot":
				_, err := env.Stdout.Write(outline.AppendDOT(nil, sum))
				return err
			}
			return outline.WriteText(env.Stdout, sum, outline.TextOptions{Depth: o.depth, MaxChildren: o.maxChildren, Nodes: o.listNodes || format == outWide})
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.configPath, "config", "", "YAML file whose provider discovers the topology (the service's format)")
	f.StringVar(&o.provider, "provider", "sim", "provider name (see `toposcope providers`)")
	o.definePluginFlags(f, providerSide)
	f.StringArrayVar(&o.providerParams, "provider-param", nil, "provider setting KEY=VALUE (repeatable)")
	addServerFlag(f, &o.server, "")
	f.StringVar(&o.tokenFile, "token-file", "", "--server: file holding a read token (when the service has tokens)")
	f.DurationVar(&o.timeout, "timeout", time.Minute, "--server: give up after this long")
	f.IntVar(&o.depth, "depth", 3, "switch levels to draw from the top (0: all)")
	f.IntVar(&o.maxChildren, "max-children", 16, "children drawn per switch before a line that counts the rest (0: all)")
	f.BoolVar(&o.listNodes, "nodes-list", false, "list the nodes under each drawn switch")
	f.StringVar(&o.node, "node", "", "draw only the path from the top of the tree to this node")
	f.StringVar(&o.format, "format", "text", "text, or dot (Graphviz, aggregated per leaf); the same as -o")
	o.out = addOutputFlags(cmd, " (wide: text with the nodes under each switch, as --nodes-list; dot: Graphviz, aggregated per leaf; json and yaml: the whole graph, as GET /v1/graph)",
		"text", outWide, "dot", outJSON, outYAML)
	return cmd
}

// outputFormat is the format asked for by -o, --json or --format (which
// exclude each other).
func (o *showOptions) outputFormat(cmd *cobra.Command) (string, error) {
	format, err := o.out.resolve(cmd)
	if err != nil {
		return "", err
	}
	if cmd.Flags().Changed("format") {
		if cmd.Flags().Changed("output") || o.out.asJSON {
			return "", fmt.Errorf("%w: --format and -o exclude each other (--format is the older name of -o)", ErrUsage)
		}
		if o.format != "text" && o.format != "dot" {
			return "", fmt.Errorf("%w: --format %q: want text or dot", ErrUsage, o.format)
		}
		format = o.format
	}
	if o.node != "" && format != "text" {
		return "", fmt.Errorf("%w: --node draws one path as text; it takes no -o %s", ErrUsage, format)
	}
	return format, nil
}

// graph discovers the topology, or reads it from --server.
func (o *showOptions) graph(cmd *cobra.Command, env *Env, root *rootOptions) (*topology.Graph, error) {
	if o.server != "" {
		for _, local := range []string{"config", "provider", "model", "provider-param"} {
			if cmd.Flags().Changed(local) {
				return nil, fmt.Errorf("%w: --%s and --server exclude each other", ErrUsage, local)
			}
		}
		ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
		defer cancel()
		return fetchGraph(ctx, strings.TrimRight(o.server, "/"), o.tokenFile)
	}
	log, err := root.logger(env.Stderr)
	if err != nil {
		return nil, err
	}
	pref, _, err := o.plugins(cmd)
	if err != nil {
		return nil, err
	}
	p, err := env.Registry.NewProvider(pref.Name, "provider", &pref.Params, providers.Deps{Logger: log.With("provider", pref.Name)})
	if err != nil {
		return nil, err
	}
	g, err := p.Discover(cmd.Context(), providers.Request{})
	if err != nil {
		return nil, fmt.Errorf("discover with %s: %w", pref.Name, err)
	}
	return g, nil
}

// fetchGraph reads GET /v1/graph from a running service. An answer other
// than 2xx is an error naming the status and the service's error message,
// never the token.
func fetchGraph(ctx context.Context, base, tokenFile string) (*topology.Graph, error) {
	token, err := readToken(tokenFile)
	if err != nil {
		return nil, err
	}
	c := &client{base: base, token: token, limit: maxGraphBytes}
	var g topology.Graph
	if err := c.do(ctx, http.MethodGet, "/v1/graph", nil, &g); err != nil {
		if errors.Is(err, ErrUsage) { // --server is no URL: the flag's error as it is
			return nil, err
		}
		return nil, fmt.Errorf("read the topology from %s: %w", base, err)
	}
	return &g, nil
}
