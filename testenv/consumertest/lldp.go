package consumertest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/agents"
	"github.com/toposcope/toposcope/providers/lldp/neighbor"
	"github.com/toposcope/toposcope/topology"
)

// LLDPHosts are the hosts of the saved LLDP fabric, in order: h1-h4 on
// two rails, h5 with its second link down.
var LLDPHosts = []string{"h1", "h2", "h3", "h4", "h5"}

// LLDPGraph discovers, with the agents provider, the Ethernet fabric whose
// hosts' real lldpcli output the agents provider's tests saved
// (providers/agents/testdata/lldp-2rail): two leaf groups, no switch above
// them. name maps a host (h1...) to the node name the graph gives it.
func LLDPGraph(name func(host string) string) (*topology.Graph, error) {
	_, here, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(here), "..", "..", "providers", "agents", "testdata", "lldp-2rail")
	cfg := agents.DefaultConfig()
	for _, h := range LLDPHosts {
		data, err := os.ReadFile(filepath.Join(dir, h+".json"))
		if err != nil {
			return nil, fmt.Errorf("consumertest: %w", err)
		}
		ns, warnings, err := neighbor.Parse(data)
		if err != nil {
			return nil, fmt.Errorf("consumertest: %s: %w", h, err)
		}
		if len(warnings) > 0 {
			return nil, fmt.Errorf("consumertest: %s: %s", h, strings.Join(warnings, "; "))
		}
		cfg.Reports = append(cfg.Reports, providers.NodeFacts{Node: name(h), GPUs: GPUsPerNode, LLDP: ns})
	}
	p, err := agents.New(cfg, providers.Deps{})
	if err != nil {
		return nil, fmt.Errorf("consumertest: %w", err)
	}
	return p.Discover(context.Background(), providers.Request{})
}
