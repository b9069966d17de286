package sim

import (
	"context"
	"errors"
	"fmt"

	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/topology"
)

// ctxCheckEvery is how many nodes graph adds between checks of its context.
const ctxCheckEvery = 4096

// Graph builds the topology of the model for req.
//
// With no requested nodes the graph holds every node of the model, every
// switch and every domain. Otherwise it holds only the requested nodes,
// the switches above them and the domains they are in. A requested node is
// looked up by Name, then (when its Name is unknown or empty) by
// InstanceID; it keeps the requested Name when one is given, and takes the
// model's facts, the request filling in an InstanceID or Region the model
// lacks. A requested node the model does not know is added with the
// request's Name, InstanceID and Region and no topology (unplaced); one
// with neither a known instance ID nor a name is an error.
func (m *Model) Graph(req providers.Request) (*topology.Graph, error) {
	return m.graph(context.Background(), req)
}

func (m *Model) graph(ctx context.Context, req providers.Request) (*topology.Graph, error) {
	b := topology.NewBuilder()
	if len(req.Nodes) == 0 {
		b.Grow(len(m.nodes))
		for i := range m.switches {
			m.addSwitch(b, int32(i))
		}
		for i := range m.nodes {
			if i%ctxCheckEvery == 0 {
				if err := ctx.Err(); err != nil {
					return nil, fmt.Errorf("model %s: %w", m.name, err)
				}
			}
			n := &m.nodes[i]
			m.addNode(b, n, n.name, "", "")
		}
	} else if err := m.addRequested(ctx, b, req.Nodes); err != nil {
		return nil, err
	}
	g, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("model %s: build graph: %w", m.name, err)
	}
	return g, nil
}

// addRequested adds the requested nodes and the switches above them.
func (m *Model) addRequested(ctx context.Context, b *topology.Builder, refs []providers.NodeRef) error {
	b.Grow(len(refs))
	used := make([]bool, len(m.switches))
	var errs []error
	for i, ref := range refs {
		if i%ctxCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("model %s: %w", m.name, err)
			}
		}
		n := m.lookup(ref)
		if n == nil {
			if ref.Name == "" {
				errs = append(errs, fmt.Errorf("requested node %d: no name, and instance ID %q is not in the model", i, ref.InstanceID))
				continue
			}
			b.AddNode(topology.Node{Name: ref.Name, InstanceID: ref.InstanceID, Region: ref.Region})
			continue
		}
		name := ref.Name
		if name == "" {
			name = n.name
		}
		m.addNode(b, n, name, ref.InstanceID, ref.Region)
		for s := n.leaf; s >= 0 && !used[s]; s = m.switches[s].parent {
			used[s] = true
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("model %s: %w", m.name, errors.Join(errs...))
	}
	for i, u := range used {
		if u {
			m.addSwitch(b, int32(i))
		}
	}
	return nil
}

// lookup finds the model node a request names, or nil.
func (m *Model) lookup(ref providers.NodeRef) *mnode {
	if ref.Name != "" {
		if i, ok := m.nameIndex()[ref.Name]; ok {
			return &m.nodes[i]
		}
	}
	if ref.InstanceID != "" {
		if i, ok := m.byInstance[ref.InstanceID]; ok {
			return &m.nodes[i]
		}
	}
	return nil
}

func (m *Model) addSwitch(b *topology.Builder, i int32) {
	s := &m.switches[i]
	b.AddSwitch(s.info)
	if s.parent >= 0 {
		b.Link(m.switches[s.parent].info.ID, s.info.ID)
	}
}

// addNode adds model node n under name; instanceID and region fill in
// what the model lacks.
func (m *Model) addNode(b *topology.Builder, n *mnode, name, instanceID, region string) {
	f := m.factsOf(n)
	node := topology.Node{
		Name: name, InstanceID: n.instanceID, Region: f.region, Zone: f.zone,
		GPUs: f.gpus, Attributes: f.attrs,
	}
	if node.InstanceID == "" {
		node.InstanceID = instanceID
	}
	if node.Region == "" {
		node.Region = region
	}
	b.AddNode(node)
	if n.leaf >= 0 {
		b.AttachNode(m.switches[n.leaf].info.ID, name)
	}
	if n.domain >= 0 {
		sub := ""
		if n.sub >= 0 {
			sub = m.subs[n.sub].id
		}
		b.AddToDomain(name, m.domains[n.domain].id, sub)
	}
}
