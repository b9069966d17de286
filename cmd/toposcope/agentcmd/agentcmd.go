// Package agentcmd is the command line of the node agent: `toposcope
// agent` in the full binary, and the whole of the small toposcope-agent
// binary that the DaemonSet runs. It links no cloud SDK: the agent needs
// the metadata services, the node's own files and one Kubernetes client.
package agentcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/toposcope/toposcope/agent"
	"github.com/toposcope/toposcope/cmd/toposcope/logflags"
	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/cloud"
)

// agentOptions are the flags of `toposcope agent`.
type agentOptions struct {
	node       string
	metadata   string
	awsURL     string
	gcpURL     string
	ociURL     string
	nvidiaSMI  string
	sysfs      string
	lldp       string
	lldpIfaces string
	lldpListen time.Duration
	annotate   bool
	kubeconfig string
	server     string
	tokenFile  string
	interval   time.Duration
	health     string
}

// ErrUsage is wrapped by command-line errors (logflags.ErrUsage: one
// sentinel for every command).
var ErrUsage = logflags.ErrUsage

// New returns the agent command: gather the node's facts and annotate
// its own Node (--annotate) or report them to the server (--server);
// with neither, print them as JSON to stdout. With --interval it repeats
// until the context ends. use is the command's name ("agent" under
// toposcope, the binary's name on its own); logger gives the logger the
// log flags ask for.
func New(use string, stdout io.Writer, logger func() (*slog.Logger, error)) *cobra.Command {
	o := &agentOptions{}
	cmd := &cobra.Command{
		Use:   use,
		Short: "Gather this node's facts (instance identity, NVLink clique, HCAs) and publish them",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("%w: %s takes no arguments, got %q", ErrUsage, cmd.CommandPath(), args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := logger()
			if err != nil {
				return err
			}
			return o.run(cmd.Context(), stdout, log)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.node, "node", "", "node name (default $NODE_NAME, else the host name)")
	f.StringVar(&o.metadata, "metadata", "auto", "metadata service: auto (AWS, then GCP, then OCI), aws, gcp, oci or none")
	f.StringVar(&o.awsURL, "aws-metadata-url", cloud.DefaultAWSEndpoint, "AWS IMDS endpoint")
	f.StringVar(&o.gcpURL, "gcp-metadata-url", cloud.DefaultGCPEndpoint, "GCP metadata server endpoint")
	f.StringVar(&o.ociURL, "oci-metadata-url", cloud.DefaultOCIEndpoint, "OCI IMDS endpoint (identity and rdmaTopologyData)")
	f.StringVar(&o.nvidiaSMI, "nvidia-smi", "nvidia-smi -q", "nvidia-smi command (empty: skip)")
	f.StringVar(&o.sysfs, "sysfs", agent.DefaultSysfsDir, "RDMA device folder (empty: skip); its devices' network interfaces are the fabric NICs")
	f.StringVar(&o.lldp, "lldp", strings.Join(agent.DefaultLLDP, " "), "command printing lldpd's neighbors as json0 (empty: skip; no lldpcli: none)")
	f.DurationVar(&o.lldpListen, "lldp-listen", 30*time.Second, "where the --lldp command is not installed, listen this long for the switches' own LLDP frames on the fabric NICs (needs CAP_NET_RAW; 0: never)")
	f.StringVar(&o.lldpIfaces, "lldp-interfaces", "", "regular expression of more fabric NICs whose LLDP neighbors are reported, besides the RDMA devices' (e.g. ^ens[0-9]+f[01]np[01]$)")
	f.BoolVar(&o.annotate, "annotate", false, "annotate this node's Kubernetes Node")
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig for --annotate (default: $KUBECONFIG, ~/.kube/config, in-cluster)")
	f.StringVar(&o.server, "server", "", "toposcope server URL to report to")
	f.StringVar(&o.tokenFile, "token-file", "", "file holding the server's bearer token")
	f.DurationVar(&o.interval, "interval", 0, "repeat every interval (0: once)")
	f.StringVar(&o.health, "health-listen", "", "serve /healthz (the agent runs) and /readyz (a round was published) on this host:port (empty: none)")
	return cmd
}

func (o *agentOptions) gatherer(log *slog.Logger) (*agent.Gatherer, error) {
	ifaces, err := agent.CompileInterfaces(o.lldpIfaces)
	if err != nil {
		return nil, fmt.Errorf("%w: --lldp-interfaces: %w", logflags.ErrUsage, err)
	}
	g := &agent.Gatherer{SysfsDir: o.sysfs, NvidiaSMI: strings.Fields(o.nvidiaSMI), LLDP: strings.Fields(o.lldp), LLDPInterfaces: ifaces, LLDPListen: o.lldpListen, Logger: log}
	aws := func(ctx context.Context) (agent.Identity, error) {
		id, err := cloud.NewClient(nil, o.awsURL).AWS(ctx)
		return agent.Identity{InstanceID: id.InstanceID, Region: id.Region, Zone: id.Zone}, err
	}
	gcp := func(ctx context.Context) (agent.Identity, error) {
		id, err := cloud.NewClient(nil, o.gcpURL).GCP(ctx)
		return agent.Identity{InstanceID: id.InstanceID, Region: id.Region, Zone: id.Zone}, err
	}
	oci := func(ctx context.Context) (agent.Identity, error) {
		id, err := cloud.NewClient(nil, o.ociURL).OCI(ctx)
		return agent.Identity{InstanceID: id.InstanceID, Region: id.Region}, err
	}
	ociHost := func(ctx context.Context) (agent.Placement, error) {
		t, err := cloud.NewClient(nil, o.ociURL).OCIHostTopology(ctx)
		return agent.Placement{Path: t.Path, Domain: t.Domain}, err
	}
	switch o.metadata {
	case "auto":
		g.Identifiers = []agent.Identifier{aws, gcp, oci}
		g.Placers = []agent.Placer{ociHost}
	case "aws":
		g.Identifiers = []agent.Identifier{aws}
	case "gcp":
		g.Identifiers = []agent.Identifier{gcp}
	case "oci":
		g.Identifiers = []agent.Identifier{oci}
		g.Placers = []agent.Placer{ociHost}
	case "none":
	default:
		return nil, fmt.Errorf("--metadata %q: want auto, aws, gcp, oci or none: %w", o.metadata, ErrUsage)
	}
	return g, nil
}

func (o *agentOptions) run(ctx context.Context, stdout io.Writer, log *slog.Logger) error {
	g, err := o.gatherer(log)
	if err != nil {
		return err
	}
	node := o.node
	if node == "" {
		node = os.Getenv("NODE_NAME")
	}
	if node == "" {
		if node, err = os.Hostname(); err != nil {
			return fmt.Errorf("agent: node name: %w", err)
		}
	}
	publish, err := o.publisher(stdout)
	if err != nil {
		return err
	}
	var ready atomic.Bool
	if o.health != "" {
		stop, err := serveHealth(o.health, &ready, log)
		if err != nil {
			return err
		}
		defer stop()
	}
	for {
		facts, err := g.Gather(ctx, node)
		if err == nil {
			err = publish(ctx, facts)
		}
		if err == nil {
			ready.Store(true)
		}
		if err != nil || o.interval <= 0 {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(o.interval):
		}
	}
}

// publisher returns what to do with the facts.
func (o *agentOptions) publisher(stdout io.Writer) (func(context.Context, providers.NodeFacts) error, error) {
	var steps []func(context.Context, providers.NodeFacts) error
	if o.annotate {
		cc := kubeclient.DefaultClientConfig()
		cc.Kubeconfig = o.kubeconfig
		clients, err := cc.Clients()
		if err != nil {
			return nil, fmt.Errorf("agent: %w", err)
		}
		steps = append(steps, func(ctx context.Context, f providers.NodeFacts) error {
			_, err := agent.Annotate(ctx, clients.Core.Nodes(), f)
			return err
		})
	}
	if o.server != "" {
		r := &agent.Reporter{Server: o.server}
		if o.tokenFile != "" {
			tok, err := os.ReadFile(o.tokenFile)
			if err != nil {
				return nil, fmt.Errorf("agent: --token-file: %w", err)
			}
			r.Token = strings.TrimSpace(string(tok))
		}
		steps = append(steps, r.Report)
	}
	if len(steps) == 0 {
		steps = append(steps, func(_ context.Context, f providers.NodeFacts) error {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(f)
		})
	}
	return func(ctx context.Context, f providers.NodeFacts) error {
		for _, s := range steps {
			if err := s(ctx, f); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// serveHealth serves the probes of the agent's pod on addr until stop:
// /healthz answers 200 while the agent runs (an agent whose round fails
// exits), /readyz 200 once a round was published and 503 before.
func serveHealth(addr string, ready *atomic.Bool, log *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("agent: --health-listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready.Load() {
			http.Error(w, "no round published yet", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ok\n")
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("agent: health endpoint", "error", err)
		}
	}()
	return func() { _ = srv.Close() }, nil
}
