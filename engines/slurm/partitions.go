package slurm

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/internal/bounded"
	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/topology"
)

// partitionTimeout bounds PartitionCommand.
const partitionTimeout = 30 * time.Second

// maxPartitionOutput caps what PartitionCommand may print.
const maxPartitionOutput = 64 << 20

// ErrPartitions is wrapped when a topology names a partition and the
// partitions cannot be read or do not hold it.
var ErrPartitions = errors.New("slurm partitions unavailable")

// partitionReader reads every partition's nodes, by partition name, and
// says where it read them.
type partitionReader interface {
	Partitions(ctx context.Context) (map[string][]string, error)
}

// ResolvePartitions returns ts with each topology that names a partition
// covering that partition's nodes, read as Config.Slurmrestd says (the
// Slinky engine's node annotations use it).
func (e *Engine) ResolvePartitions(ctx context.Context, g *topology.Graph, ts []TopologyConfig) ([]TopologyConfig, error) {
	return e.withPartitions(ctx, g, ts)
}

// withPartitions returns ts with each topology that names a partition
// covering that partition's nodes (a partition with none: flat), reading
// the partitions once when one is named. The partitions come from
// slurmrestd when configured, else from the nodes' slurmPartitions
// attribute, else from PartitionCommand.
func (e *Engine) withPartitions(ctx context.Context, g *topology.Graph, ts []TopologyConfig) ([]TopologyConfig, error) {
	if !slices.ContainsFunc(ts, func(t TopologyConfig) bool { return t.Partition != "" }) {
		return ts, nil
	}
	members, source, err := e.partitions(ctx, g)
	if err != nil {
		return nil, err
	}
	e.lastPartitions.Store(&members)
	return resolvePartitions(ts, members, source)
}

// resolvePartitions sets each partition topology's Nodes from members.
func resolvePartitions(ts []TopologyConfig, members map[string][]string, source string) ([]TopologyConfig, error) {
	out := slices.Clone(ts)
	for i := range out {
		t := &out[i]
		if t.Partition == "" {
			continue
		}
		nodes, ok := members[t.Partition]
		switch {
		case !ok:
			return nil, fmt.Errorf("topologies[%d].partition: %s lists no partition %q (it has %s): %w: %w",
				i, source, t.Partition, strings.Join(slices.Sorted(maps.Keys(members)), ", "), ErrPartitions, engines.ErrInexpressible)
		case len(nodes) == 0:
			t.Plugin, t.BlockSizes, t.BlockName = KindFlat, nil, nil
		default:
			t.Nodes = hostlist.Compress(nodes)
		}
	}
	return out, nil
}

// partitions reads the partitions from the first source that has them.
func (e *Engine) partitions(ctx context.Context, g *topology.Graph) (map[string][]string, string, error) {
	if e.rest != nil {
		m, err := e.rest.Partitions(ctx)
		if err != nil {
			return nil, "", fmt.Errorf("slurmrestd: %w: %w", ErrPartitions, err)
		}
		return m, "slurmrestd", nil
	}
	if m := attributePartitions(g); len(m) > 0 {
		return m, "the nodes' " + topology.AttrSlurmPartitions + " attribute", nil
	}
	if len(e.cfg.PartitionCommand) == 0 {
		return nil, "", fmt.Errorf("a topology names a partition, but no node carries its partitions (the slurm-nodes provider sets them), "+
			"and neither slurmrestd nor partitionCommand is configured: %w", ErrPartitions)
	}
	cctx, cancel := context.WithTimeout(ctx, partitionTimeout)
	defer cancel()
	out, err := bounded.Run(cctx, e.cfg.PartitionCommand, maxPartitionOutput)
	if err != nil {
		return nil, "", fmt.Errorf("partitionCommand %s: %w: %w", strings.Join(e.cfg.PartitionCommand, " "), ErrPartitions, err)
	}
	m, err := ParsePartitions(out)
	if err != nil {
		return nil, "", fmt.Errorf("partitionCommand %s: %w", strings.Join(e.cfg.PartitionCommand, " "), err)
	}
	return m, "partitionCommand", nil
}

// attributePartitions gathers the partitions of g's nodes from their
// slurmPartitions attribute; nil when no node has one.
func attributePartitions(g *topology.Graph) map[string][]string {
	members := map[string][]string{}
	for _, n := range g.Nodes() {
		for _, p := range strings.Split(n.Attributes[topology.AttrSlurmPartitions], ",") {
			if p != "" {
				members[p] = append(members[p], n.Name)
			}
		}
	}
	if len(members) == 0 {
		return nil
	}
	return members
}

// ParsePartitions reads `scontrol -o show partitions`: one partition a
// line, "PartitionName=P ... Nodes=HOSTLIST ..." ("(null)" or "NONE" when
// it has none). An error names the line.
func ParsePartitions(out []byte) (map[string][]string, error) {
	members := map[string][]string{}
	for i, line := range strings.Split(string(out), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		var name, nodes string
		hasNodes := false
		for _, f := range strings.Fields(line) {
			k, v, _ := strings.Cut(f, "=")
			switch k {
			case "PartitionName":
				name = v
			case "Nodes":
				nodes, hasNodes = v, true
			}
		}
		if name == "" || !hasNodes {
			return nil, fmt.Errorf("line %d: want PartitionName=... and Nodes=... (the output of scontrol -o show partitions): %w", i+1, ErrPartitions)
		}
		if nodes == "(null)" || nodes == "NONE" {
			members[name] = nil
			continue
		}
		names, err := hostlist.Expand(nodes)
		if err != nil {
			return nil, fmt.Errorf("line %d: partition %s: Nodes: %w: %w", i+1, name, err, ErrPartitions)
		}
		members[name] = names
	}
	if len(members) == 0 {
		return nil, fmt.Errorf("no partition in the output: %w", ErrPartitions)
	}
	return members, nil
}
