package slinky

import (
	"bytes"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/engines/slurm"
)

// Values of Config.ConfigUpdateMode (Topograph's names).
const (
	// UpdateFull writes the whole topology file (the default).
	UpdateFull = "full"
	// UpdateSkeleton writes the file without node lists or comments: the
	// switches and blocks only, so that it changes (and slurmctld is
	// reconfigured) only when the fabric does, not when a node comes or
	// goes. Each node's place reaches slurmctld through its annotation.
	UpdateSkeleton = "skeleton-only"
	// UpdateNone writes no file: only the node annotations.
	UpdateNone = "none"
)

// skeleton strips a rendered topology file down to its units: no node
// lists, no comments (whose counts change with the nodes).
func skeleton(data []byte, plugin string) ([]byte, error) {
	if plugin != slurm.PluginYAML {
		var out bytes.Buffer
		for _, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
				continue
			}
			var kept []string
			for _, f := range strings.Fields(line) {
				if !strings.HasPrefix(f, "Nodes=") {
					kept = append(kept, f)
				}
			}
			out.WriteString(strings.Join(kept, " ") + "\n")
		}
		return out.Bytes(), nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("skeleton of topology.yaml: %w", err)
	}
	stripNodes(&doc)
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, fmt.Errorf("skeleton of topology.yaml: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("skeleton of topology.yaml: %w", err)
	}
	return out.Bytes(), nil
}

// stripNodes removes every "nodes" key and every comment below n.
func stripNodes(n *yaml.Node) {
	n.HeadComment, n.LineComment, n.FootComment = "", "", ""
	if n.Kind == yaml.MappingNode {
		kept := n.Content[:0]
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value != "nodes" {
				kept = append(kept, n.Content[i], n.Content[i+1])
			}
		}
		n.Content = kept
	}
	for _, c := range n.Content {
		stripNodes(c)
	}
}
