package ufm

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/toposcope/toposcope/providers/infiniband"
	"github.com/toposcope/toposcope/providers/infiniband/fabric"
)

// maxReported caps how many bad systems or links an error lists.
const maxReported = 10

// laneGbps is the nominal lane rate of the speeds UFM names.
func laneGbps(speed string) (float64, bool) {
	switch strings.ToUpper(strings.TrimSpace(speed)) {
	case "SDR":
		return 2.5, true
	case "DDR":
		return 5, true
	case "QDR", "FDR10":
		return 10, true
	case "FDR":
		return 14, true
	case "EDR":
		return 25, true
	case "HDR":
		return 50, true
	case "NDR":
		return 100, true
	case "XDR":
		return 200, true
	}
	return 0, false
}

// gbps is the nominal rate of a link ("4x" and "NDR": 400); 0 when unknown.
func (l Link) gbps() uint32 {
	var width int
	if _, err := fmt.Sscanf(strings.ToLower(l.Width), "%dx", &width); err != nil || width <= 0 {
		return 0
	}
	lane, ok := laneGbps(l.Speed)
	if !ok {
		return 0
	}
	return uint32(float64(width)*lane + 0.5)
}

// reduce builds the switch tree from UFM's systems and links.
func (p *Provider) reduce(s *Snapshot) (*fabric.Tree, error) {
	f := fabric.New()
	if p.names.AllHCAs() {
		f.ChooseLeaves() // as the infiniband provider: one rule for every multi-rail host
	}
	byGUID := map[string]*System{}
	names := map[string]infiniband.CAName{} // host systems by GUID
	var errs []error
	var unnamed []string
	seen := map[string]string{}
	for i := range s.Systems {
		sys := &s.Systems[i]
		g := normGUID(sys.GUID)
		byGUID[g] = sys
		switch sys.Type {
		case "switch":
			id := p.switchID(sys)
			if other, dup := seen[id]; dup && len(errs) < maxReported {
				errs = append(errs, fmt.Errorf("switches %s and %s are both called %q (set switchIDs: guid): %w", other, g, id, ErrInconsistent))
			}
			seen[id] = g
			f.AddSwitch(id, sys.Name)
		case "host":
			v, _ := strconv.ParseUint(g, 16, 64)
			ca := p.names.Name(sys.Name, v)
			if ca.Host == "" && !ca.Ignored {
				ca = p.names.HostOnly(sys.Name, v) // a system renamed to its host's name
			}
			names[g] = ca
			if ca.Host == "" && !ca.Ignored {
				unnamed = append(unnamed, strconv.Quote(sys.Name))
			}
		}
	}
	if len(unnamed) > 0 {
		p.log.Warn("ufm: host systems whose system_name names no host (hostPattern) are left out", "count", len(unnamed),
			"first", strings.Join(unnamed[:min(len(unnamed), maxReported)], ", "))
	}
	bad := 0
	for _, l := range s.Links {
		a, aok := byGUID[normGUID(l.SourceGUID)]
		b, bok := byGUID[normGUID(l.DestinationGUID)]
		if !aok || !bok {
			if bad < maxReported {
				errs = append(errs, fmt.Errorf("link %s[%s] - %s[%s] names a GUID that is no UFM system: %w",
					l.SourceGUID, l.SourcePort, l.DestinationGUID, l.DestinationPort, ErrInconsistent))
			}
			bad++
			continue
		}
		p.addLink(f, a, b, names, l.gbps())
	}
	if bad > maxReported {
		errs = append(errs, fmt.Errorf("and %d more such links", bad-maxReported))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	tree, err := f.Reduce()
	if errors.Is(err, fabric.ErrNoLeaves) {
		return nil, fmt.Errorf("%w: %d systems, %d links, no host (type host) of the cluster is linked to a switch", err, len(s.Systems), len(s.Links))
	}
	return tree, err
}

// addLink adds a cable: between switches, or from a switch to a host
// system, named by the naming rules (names, by GUID): a selected HCA of
// a cluster host attaches its host; another named or unnamed end point
// marks the switch foreign; an ignored one (a SHARP aggregation node)
// does neither.
func (p *Provider) addLink(f *fabric.Fabric, a, b *System, names map[string]infiniband.CAName, gbps uint32) {
	if a.Type == "host" && b.Type == "switch" {
		a, b = b, a
	}
	switch {
	case a.Type == "switch" && b.Type == "switch":
		f.Link(p.switchID(a), p.switchID(b), gbps)
	case a.Type == "switch" && b.Type == "host":
		ca := names[normGUID(b.GUID)]
		switch {
		case ca.Ignored:
		case ca.Host != "" && ca.Selected && p.hosts.Has(ca.Host):
			f.AttachHost(p.switchID(a), ca.Host)
		default:
			f.MarkForeign(p.switchID(a), b.Name)
		}
	}
}

func (p *Provider) switchID(s *System) string {
	if p.cfg.SwitchIDs == SwitchIDsName && s.Name != "" {
		return s.Name
	}
	return normGUID(s.GUID)
}
