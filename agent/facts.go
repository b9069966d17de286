// Package agent is toposcope's node agent: on one node it gathers the
// node-local facts a discovery cannot see from outside — the instance
// identity (where a cloud metadata service answers), the NVLink clique
// (from nvidia-smi), the local HCAs (from sysfs) and the switch ports its
// fabric NICs are cabled to (from lldpd) — and publishes them,
// either as annotations on the node's own Kubernetes Node (which the
// k8s-labels provider and the Kubernetes engines read back) or as a report
// to the toposcope server over REST.
package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"regexp"
	"time"

	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/nvlink"
)

// ErrGather is wrapped when a local fact source answered with something
// the agent cannot use (garbled nvidia-smi output, an unreadable sysfs).
var ErrGather = errors.New("gather node facts")

// Identity is an instance's identity from a metadata service.
type Identity struct {
	InstanceID, Region, Zone string
}

// Identifier asks a metadata service who this instance is. An error means
// it did not answer (the agent then reports no identity).
type Identifier func(ctx context.Context) (Identity, error)

// Placement is where the node sits in its cloud's fabric (path closest
// first) and its accelerator domain, as its metadata service says.
type Placement struct {
	Path   []string
	Domain string
}

// Placer asks a metadata service where this host sits. An error means it
// did not answer (the agent then reports no fabric).
type Placer func(ctx context.Context) (Placement, error)

// Runner runs a command (argv) and returns its standard output.
type Runner func(ctx context.Context, argv []string) ([]byte, error)

// ExecRunner runs argv directly (no shell).
func ExecRunner(ctx context.Context, argv []string) ([]byte, error) {
	if len(argv) == 0 {
		return nil, errors.New("empty command")
	}
	return exec.CommandContext(ctx, argv[0], argv[1:]...).Output()
}

// Gatherer collects providers.NodeFacts. Its fields are the sources; a nil source is
// skipped.
type Gatherer struct {
	// Identifiers are tried in order; the first that answers wins.
	Identifiers []Identifier
	// Placers are tried in order once an identifier answered (a host
	// with no metadata service is not asked again); the first that
	// answers wins.
	Placers []Placer
	// NvidiaSMI is the nvidia-smi command (e.g. ["nvidia-smi", "-q"]);
	// nil skips it. A missing binary means no GPUs, not an error.
	NvidiaSMI []string
	// Run runs NvidiaSMI (ExecRunner when nil).
	Run Runner
	// SysfsDir is the infiniband class folder (/sys/class/infiniband);
	// empty skips it. A missing folder means no HCAs. Its devices'
	// network interfaces are the fabric NICs whose LLDP neighbors count.
	SysfsDir string
	// LLDP is the command that prints lldpd's neighbors as json0
	// (DefaultLLDP); nil skips it. A missing lldpcli means none.
	LLDP []string
	// LLDPInterfaces also makes the NICs whose name it matches fabric
	// NICs (a RoCE fabric without RDMA devices in sysfs, or a test's).
	LLDPInterfaces *regexp.Regexp
	// LLDPListen, where the LLDP command is not installed, listens this
	// long for the switches' own LLDP frames on the fabric NICs (a raw
	// socket: CAP_NET_RAW); 0 does not.
	LLDPListen time.Duration
	// Logger receives what did not answer; discarded when nil.
	Logger *slog.Logger
}

// Gather returns the facts of the named node. Sources that are absent (no
// metadata service, no nvidia-smi, no HCAs) leave their facts empty;
// sources that answer with garbage are an error wrapping ErrGather.
func (g *Gatherer) Gather(ctx context.Context, node string) (providers.NodeFacts, error) {
	log := g.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	f := providers.NodeFacts{Node: node}
	var errs []error
	for i, id := range g.Identifiers {
		in, err := id(ctx)
		if err != nil {
			log.Debug("agent: metadata service did not answer", "identifier", i, "error", err)
			continue
		}
		f.InstanceID, f.Region, f.Zone = in.InstanceID, in.Region, in.Zone
		break
	}
	for i, place := range g.Placers {
		if f.InstanceID == "" {
			break
		}
		pl, err := place(ctx)
		if err != nil {
			log.Debug("agent: metadata service gave no fabric placement", "placer", i, "error", err)
			continue
		}
		f.Fabric, f.FabricDomain = pl.Path, pl.Domain
		break
	}
	if len(g.NvidiaSMI) > 0 {
		if err := g.gpus(ctx, &f); err != nil {
			errs = append(errs, err)
		}
	}
	if g.SysfsDir != "" {
		hcas, err := ReadHCAs(g.SysfsDir)
		if err != nil {
			errs = append(errs, err)
		}
		f.HCAs = hcas
	}
	if len(g.LLDP) > 0 {
		n, err := g.lldpNeighbors(ctx, log)
		if err != nil {
			errs = append(errs, err)
		}
		f.LLDP = n
	}
	if err := ctx.Err(); err != nil {
		return providers.NodeFacts{}, fmt.Errorf("agent: %w", err)
	}
	return f, errors.Join(errs...)
}

func (g *Gatherer) gpus(ctx context.Context, f *providers.NodeFacts) error {
	run := g.Run
	if run == nil {
		run = ExecRunner
	}
	out, err := run(ctx, g.NvidiaSMI)
	if errors.Is(err, exec.ErrNotFound) {
		return nil // no NVIDIA driver: no GPUs
	}
	if err != nil {
		return fmt.Errorf("%w: %v: %w", ErrGather, g.NvidiaSMI, err)
	}
	gpus, err := nvlink.Parse(out, nvlink.FormatAuto)
	if err != nil {
		return fmt.Errorf("%w: %v: %w", ErrGather, g.NvidiaSMI, err)
	}
	h, err := nvlink.Summarize(gpus)
	if err != nil {
		return fmt.Errorf("%w: %v: %w", ErrGather, g.NvidiaSMI, err)
	}
	f.GPUs, f.Rack = h.GPUs, h.Rack
	if h.HasClique {
		f.Clique = h.Clique.String()
	}
	return nil
}
