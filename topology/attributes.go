package topology

import (
	"maps"
	"slices"
)

// AttrSlurmPartitions is the node attribute that holds the Slurm
// partitions a node belongs to, comma-separated (set by the slurm-nodes
// provider, read by the Slurm engine's per-partition topologies).
const AttrSlurmPartitions = "slurmPartitions"

// WithAttributes returns a graph like g whose nodes also carry the
// attributes in add (node name → key → value; a key already set is
// replaced). Nodes add does not name are unchanged, names g lacks are
// ignored, and g itself is not modified: switches and domains are
// shared, nodes are copied.
func (g *Graph) WithAttributes(add map[string]map[string]string) *Graph {
	if len(add) == 0 {
		return g
	}
	out := *g
	out.nodes = slices.Clone(g.nodes)
	for name, attrs := range add {
		i, ok := g.nodeAt(name)
		if !ok || len(attrs) == 0 {
			continue
		}
		merged := maps.Clone(out.nodes[i].Attributes)
		if merged == nil {
			merged = make(map[string]string, len(attrs))
		}
		maps.Copy(merged, attrs)
		out.nodes[i].Attributes = merged
	}
	return &out
}
