package agents

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/infiniband"
	"github.com/toposcope/toposcope/topology"
)

// fabricOutputs returns the ibnetdiscover outputs of the fresh reports to
// build the tree from: the freshest of each fabric (two outputs that share
// a switch are of one fabric), freshest first, and how many older ones of
// a fabric already taken were left aside. An output that does not parse
// is an error naming the node that sent it.
func fabricOutputs(fresh map[string]providers.AgentReport) ([]providers.AgentReport, int, error) {
	var with []providers.AgentReport
	for _, r := range fresh {
		if r.Facts.IBNetDiscover != "" {
			with = append(with, r)
		}
	}
	slices.SortFunc(with, func(a, b providers.AgentReport) int {
		if c := b.ReceivedAt.Compare(a.ReceivedAt); c != 0 {
			return c
		}
		return strings.Compare(a.Facts.Node, b.Facts.Node)
	})
	taken := map[uint64]bool{} // switch GUIDs of the fabrics taken
	var out []providers.AgentReport
	older := 0
	for _, r := range with {
		t, err := infiniband.Parse(strings.NewReader(r.Facts.IBNetDiscover), "ibnetdiscover of node "+r.Facts.Node)
		if err != nil {
			return nil, 0, fmt.Errorf("%w: %w", ErrBadReport, err)
		}
		var switches []uint64
		seen := false
		for _, n := range t.Nodes {
			if n.Type == infiniband.Switch {
				switches = append(switches, n.GUID)
				seen = seen || taken[n.GUID]
			}
		}
		if seen {
			older++
			continue
		}
		for _, g := range switches {
			taken[g] = true
		}
		out = append(out, r)
	}
	return out, older, nil
}

// fabricGraph builds the switch tree of the reported fabrics above the
// named nodes, or returns nil when no fresh report carries one. Each HCA
// that an agent reported (by node GUID) is named after that agent's node,
// so that nodes are placed by their HCAs whatever rdma-ndd wrote; other
// HCAs keep their descriptions (hostPattern). The tree is then built as
// the infiniband provider builds it (errors say what and where).
func (p *Provider) fabricGraph(ctx context.Context, fresh map[string]providers.AgentReport, names []string) (*topology.Graph, error) {
	outs, older, err := fabricOutputs(fresh)
	if err != nil || len(outs) == 0 {
		return nil, err
	}
	var all bytes.Buffer
	senders := make([]string, len(outs))
	for i, r := range outs {
		all.WriteString(r.Facts.IBNetDiscover)
		all.WriteByte('\n')
		senders[i] = r.Facts.Node
	}
	src := "ibnetdiscover reported by " + strings.Join(senders, ",")
	t, err := infiniband.Parse(&all, src)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadReport, err)
	}
	type owner struct{ node, hca string }
	byGUID := map[string]owner{}
	for _, r := range fresh {
		for _, h := range r.Facts.HCAs {
			if h.NodeGUID != "" {
				byGUID[h.NodeGUID] = owner{r.Facts.Node, h.Name}
			}
		}
	}
	for i := range t.Nodes {
		n := &t.Nodes[i]
		if o, ok := byGUID[infiniband.FormatGUID(n.GUID)]; ok && n.Type == infiniband.CA {
			n.Description = o.node + " " + o.hca
		}
	}
	refs := make([]providers.NodeRef, len(names))
	for i, n := range names {
		refs[i] = providers.NodeRef{Name: n}
	}
	g, err := p.ib.DiscoverTopology(ctx, t, src, providers.Request{Nodes: refs})
	if err != nil {
		return nil, err
	}
	p.log.Debug("agents: fabric from agent reports", "reporters", len(outs), "olderOfSameFabric", older, "switches", len(g.Switches()))
	return g, nil
}
