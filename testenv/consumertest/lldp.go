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
	"github.com/toposcope/toposcope/providers/lldp"
	"github.com/toposcope/toposcope/providers/lldp/neighbor"
	"github.com/toposcope/toposcope/testenv/snmprec"
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
	cfg := agents.DefaultConfig()
	var err error
	if cfg.Reports, err = SavedReports(repoDir("providers", "agents", "testdata", "lldp-2rail"), LLDPHosts, name); err != nil {
		return nil, err
	}
	p, err := agents.New(cfg, providers.Deps{})
	if err != nil {
		return nil, fmt.Errorf("consumertest: %w", err)
	}
	return p.Discover(context.Background(), providers.Request{})
}

// repoDir is a folder of the repository, by its path elements.
func repoDir(elem ...string) string {
	_, here, _, _ := runtime.Caller(0)
	return filepath.Join(append([]string{filepath.Dir(here), "..", ".."}, elem...)...)
}

// SavedReports reads each host's saved lldpcli output (dir/<host>.json)
// into its node's report (the node named name(host)); a parse warning is
// an error.
func SavedReports(dir string, hosts []string, name func(string) string) ([]providers.NodeFacts, error) {
	var out []providers.NodeFacts
	for _, h := range hosts {
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
		out = append(out, providers.NodeFacts{Node: name(h), GPUs: GPUsPerNode, LLDP: ns})
	}
	return out, nil
}

// FatTreeHosts are the cluster hosts of the saved 3-tier Ethernet fat
// tree, in order: h1, h2 under one leaf group, h3 under another of the
// same pod, h4 in the other pod.
var FatTreeHosts = []string{"h1", "h2", "h3", "h4"}

// FatTreeGraph discovers, with the lldp provider, the 3-tier Ethernet fat
// tree (two rails) whose hosts' lldpcli output and switches' LLDP-MIB
// walks (served by the real snmpd from the real lldpd) the lldp
// provider's tests saved (providers/lldp/testdata/fattree): leaf groups
// under two spine groups under one core group. name maps a host (h1...)
// to the node name the graph gives it.
func FatTreeGraph(name func(host string) string) (*topology.Graph, error) {
	dir := repoDir("providers", "lldp", "testdata", "fattree")
	cfg := lldp.DefaultConfig()
	var err error
	if cfg.Reports, err = SavedReports(dir, FatTreeHosts, func(h string) string { return h }); err != nil {
		return nil, err
	}
	walks, err := filepath.Glob(filepath.Join(dir, "*.snmprec"))
	if err != nil || len(walks) == 0 {
		return nil, fmt.Errorf("consumertest: no saved walks in %s", dir)
	}
	saved := SavedSwitches{}
	cfg.SNMP = &lldp.SNMP{CommunityFile: "unused: the walks are saved", Addresses: map[string]string{}, MaxHops: 3}
	for _, w := range walks {
		sw := strings.TrimSuffix(filepath.Base(w), ".snmprec")
		saved[sw], cfg.SNMP.Addresses[sw] = w, sw
	}
	p, err := lldp.NewWithWalker(cfg, providers.Deps{}, saved)
	if err != nil {
		return nil, fmt.Errorf("consumertest: %w", err)
	}
	g, err := p.Discover(context.Background(), providers.Request{})
	if err != nil {
		return nil, fmt.Errorf("consumertest: %w", err)
	}
	return Renamed(g, name)
}

// SavedSwitches is an lldp.Walker over saved walks: each host (a switch
// name in snmp.addresses) answers with its .snmprec file.
type SavedSwitches map[string]string

// Walk implements lldp.Walker.
func (s SavedSwitches) Walk(ctx context.Context, host string, _ int, root string, fn func(lldp.Var) error) error {
	file, ok := s[host]
	if !ok {
		return fmt.Errorf("%w: %s: no answer", lldp.ErrSNMP, host)
	}
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	recs, err := snmprec.Read(f)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	for _, r := range snmprec.Sort(recs) {
		if err := ctx.Err(); err != nil {
			return err
		}
		if strings.HasPrefix(r.OID, root+".") {
			if err := fn(lldp.Var{OID: r.OID, Bytes: r.Bytes, Int: r.Int}); err != nil {
				return err
			}
		}
	}
	return nil
}

// Renamed is g with each node renamed by name, its switch path kept.
func Renamed(g *topology.Graph, name func(string) string) (*topology.Graph, error) {
	b := topology.NewBuilder()
	for _, n := range g.Nodes() {
		m := n
		m.Name, m.Leaf, m.Domain, m.SubDomain = name(n.Name), "", "", ""
		b.AddNode(m)
		if path := g.PathInfo(n.Name); path != nil {
			b.AddPath(m.Name, path)
		}
	}
	out, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("consumertest: rename: %w", err)
	}
	return out, nil
}
