package cloud

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/topology"
)

// maxLoggedNames caps how many unplaced node names one log line lists.
const maxLoggedNames = 20

// Instance is what a cloud API says about one instance, reduced to the
// common model.
type Instance struct {
	// ID is the cloud's instance ID.
	ID string
	// Name is a host name the API gives (empty if none).
	Name string
	// Region and Zone locate the instance.
	Region, Zone string
	// Path lists the fabric switch IDs closest first (leaf first); empty
	// when the API gave no topology.
	Path []string
	// Domain and SubDomain are the accelerator domain, if any.
	Domain, SubDomain string
	// Attributes are extra non-secret facts (instance type...).
	Attributes map[string]string
}

// Wanted is one node a discovery covers.
type Wanted struct {
	// Name is the node name in the graph.
	Name string
	// InstanceID is the cloud instance ID (empty when unknown).
	InstanceID string
	// Region is the requested region, if any.
	Region string
}

// Mapping turns a request into the wanted nodes. Names maps instance IDs
// to node names (explicit configuration); ParseID extracts an instance ID
// from a Kubernetes providerID or returns its input.
type Mapping struct {
	Names   map[string]string
	ParseID func(string) string
}

// NameOf returns the node name of an instance: the configured name, the
// API's host name, or the instance ID.
func (m Mapping) NameOf(in Instance) string {
	if n := m.Names[in.ID]; n != "" {
		return n
	}
	if in.Name != "" {
		return in.Name
	}
	return in.ID
}

// Want lists the requested nodes. It reports whether every node has an
// instance ID (so that the provider may ask for those instances only).
func (m Mapping) Want(req providers.Request) ([]Wanted, bool) {
	byName := make(map[string]string, len(m.Names))
	for id, n := range m.Names {
		byName[n] = id
	}
	out := make([]Wanted, 0, len(req.Nodes))
	all := true
	for _, r := range req.Nodes {
		id := r.InstanceID
		if id != "" && m.ParseID != nil {
			id = m.ParseID(id)
		}
		if id == "" {
			id = byName[r.Name]
		}
		name := r.Name
		if name == "" {
			name = m.Names[id]
		}
		if name == "" {
			name = id
		}
		if id == "" {
			all = false
		}
		out = append(out, Wanted{Name: name, InstanceID: id, Region: r.Region})
	}
	return out, all
}

// Report says what a discovery could not place.
type Report struct {
	// Omitted are requested nodes the API did not return.
	Omitted []string
	// NoTopology are nodes the API returned without topology.
	NoTopology []string
}

// Count is the number of unplaced nodes.
func (r Report) Count() int { return len(r.Omitted) + len(r.NoTopology) }

// Log writes the report as one warning (count and the first names); it
// writes nothing when every node was placed.
func (r Report) Log(log *slog.Logger, provider string) {
	if r.Count() == 0 {
		return
	}
	log.Warn(provider+": instances without topology are unplaced",
		"omitted", len(r.Omitted), "omittedNames", firstNames(r.Omitted),
		"noTopology", len(r.NoTopology), "noTopologyNames", firstNames(r.NoTopology))
}

// Record gives the report's counts to obs (metrics).
func (r Report) Record(obs providers.Observer, provider string) {
	if obs != nil {
		obs.Unplaced(provider, len(r.Omitted), len(r.NoTopology))
	}
}

func firstNames(names []string) string {
	if len(names) > maxLoggedNames {
		return strings.Join(names[:maxLoggedNames], ",") + fmt.Sprintf(",... (%d more)", len(names)-maxLoggedNames)
	}
	return strings.Join(names, ",")
}

// Assemble builds the graph. With wanted empty, every instance found is a
// node; otherwise exactly the wanted nodes are, each found by instance ID
// (or, failing that, by node name). Nodes not found or without a path
// are unplaced and listed in the Report.
func (m Mapping) Assemble(ctx context.Context, wanted []Wanted, found []Instance) (*topology.Graph, Report, error) {
	var rep Report
	byID := make(map[string]int, len(found))
	byName := make(map[string]int, len(found))
	for i := range found {
		if found[i].ID != "" { // an answer may leave IDs out: they match nothing
			byID[found[i].ID] = i
		}
		byName[m.NameOf(found[i])] = i
	}
	b := topology.NewBuilder()
	if len(wanted) == 0 {
		wanted = make([]Wanted, 0, len(found))
		for _, in := range found {
			wanted = append(wanted, Wanted{Name: m.NameOf(in), InstanceID: in.ID})
		}
	}
	b.Grow(len(wanted))
	for i, w := range wanted {
		if i%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, rep, err
			}
		}
		idx, ok := byID[w.InstanceID]
		if !ok || w.InstanceID == "" {
			idx, ok = byName[w.Name]
		}
		if !ok {
			b.AddNode(topology.Node{Name: w.Name, InstanceID: w.InstanceID, Region: w.Region})
			rep.Omitted = append(rep.Omitted, w.Name)
			continue
		}
		in := &found[idx]
		region := in.Region
		if region == "" {
			region = w.Region
		}
		b.AddNode(topology.Node{Name: w.Name, InstanceID: in.ID, Region: region, Zone: in.Zone, Attributes: in.Attributes})
		if len(in.Path) == 0 {
			rep.NoTopology = append(rep.NoTopology, w.Name)
		} else {
			path := make([]topology.SwitchInfo, len(in.Path))
			for j, id := range in.Path {
				path[j] = topology.SwitchInfo{ID: id}
			}
			b.AddPath(w.Name, path)
		}
		if in.Domain != "" {
			b.AddToDomain(w.Name, in.Domain, in.SubDomain)
		}
	}
	g, err := b.Build()
	if err != nil {
		return nil, rep, fmt.Errorf("build graph: %w", err)
	}
	slices.Sort(rep.Omitted)
	slices.Sort(rep.NoTopology)
	return g, rep, nil
}
