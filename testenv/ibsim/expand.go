package ibsim

import (
	"fmt"
	"slices"
	"strings"

	"github.com/toposcope/toposcope/topology"
)

// Expansion says how Expand turns a cluster model (a logical switch tree)
// into the physical fabric a real cluster would have.
type Expansion struct {
	// Redundancy is the number of physical switches per model switch, by
	// level: Redundancy[1] for the switches above the leaves, and so on.
	// Leaves are expanded by Rails; missing entries mean 1.
	Redundancy []int
	// Rails is the number of compute HCAs per host, named mlx5_0,
	// mlx5_1, …; each model leaf becomes one physical leaf per rail and
	// HCA r of every host is cabled to rail leaf r (default 1).
	Rails int
	// Planes cables member i of a redundant upper group only to member i
	// of its parent group when both have the same size (the planes of a
	// three-tier fat tree). Otherwise every member is cabled to every
	// member of the parent group.
	Planes bool
	// StorageHCA, when set, gives every host one more HCA with this name,
	// cabled to a storage leaf per model leaf. Storage leaves are cabled
	// to every member of the leaf's parent group (a converged fabric)
	// and each also holds StorageServers storage servers
	// ("<storage leaf>-srv<n>"), whose HCA is called mlx5_0.
	StorageHCA     string
	StorageServers int
	// StorageShared puts every host's storage HCA on one storage leaf,
	// "storage", instead of one storage leaf per model leaf.
	StorageShared bool
	// Omit lists cables to leave out, each as "A B" physical node IDs (a
	// missing cable). Switch IDs are "<model ID>" with "-r<rail>" for rail
	// leaves or "-<n>" for redundant switches; an HCA's ID is
	// "<host>/<hca>".
	Omit []string
}

// Physical ID bases, so that GUIDs look like NVIDIA ones.
const (
	switchGUIDBase uint64 = 0x2c5eab0300000000
	hcaGUIDBase    uint64 = 0xe09d730300000000
	minSwitchPorts        = 36
)

// Expand builds the physical fabric of a cluster model. Every model
// switch with a parent must have a link speed of 0 (ibsim's default,
// 4xSDR), 10, 20 or 40 Gb/s (4x SDR, DDR, QDR); host cables get the speed
// of their leaf's uplink.
func Expand(model *topology.Graph, x Expansion) (*Fabric, error) {
	e := &expander{model: model, x: x, f: &Fabric{logical: map[string]string{}}, members: map[string][]string{},
		ports: map[string]int{}, omit: map[string]bool{}, storageServed: map[string]bool{}}
	if e.x.Rails <= 0 {
		e.x.Rails = 1
	}
	for _, o := range x.Omit {
		a, b, ok := strings.Cut(o, " ")
		if !ok {
			return nil, fmt.Errorf("omit %q: want \"A B\"", o)
		}
		e.omit[a+" "+b], e.omit[b+" "+a] = true, true
	}
	for _, s := range model.Switches() {
		if err := e.expandSwitch(s); err != nil {
			return nil, err
		}
	}
	for _, s := range model.Switches() {
		if s.Parent == "" {
			continue
		}
		speed, err := speedOf(s.LinkSpeedGbps)
		if err != nil {
			return nil, fmt.Errorf("switch %q: %w", s.ID, err)
		}
		e.cableGroups(s.ID, s.Parent, speed)
	}
	for _, n := range model.Nodes() {
		if n.Leaf != "" {
			e.expandHost(n)
		}
	}
	for i := range e.f.Switches {
		e.f.Switches[i].Ports = max(minSwitchPorts, e.ports[e.f.Switches[i].ID])
	}
	return e.f, nil
}

type expander struct {
	model   *topology.Graph
	x       Expansion
	f       *Fabric
	members map[string][]string // model switch -> physical IDs
	ports   map[string]int      // node ID -> ports used
	omit    map[string]bool
	// storageServed marks the storage leaves whose servers were added.
	storageServed map[string]bool
}

func speedOf(gbps uint32) (Speed, error) {
	switch gbps {
	case 0:
		return SpeedDefault, nil
	case 10:
		return SDR, nil
	case 20:
		return DDR, nil
	case 40:
		return QDR, nil
	}
	return 0, fmt.Errorf("ibsim simulates 4x links of 10, 20 or 40 Gb/s only, not %d", gbps)
}

func (e *expander) addSwitch(id, logical string) {
	guid := switchGUIDBase + uint64(len(e.f.Switches)+1)
	e.f.Switches = append(e.f.Switches, Switch{ID: id, Description: "MF0;" + id + ":MQM9700/U1", GUID: guid})
	if logical != "" {
		e.f.logical[id] = logical
		e.f.logical[fmt.Sprintf("%016x", guid)] = logical
	}
}

func (e *expander) expandSwitch(s topology.Switch) error {
	n := 1
	if s.Level == 0 {
		n = e.x.Rails
	} else if s.Level < len(e.x.Redundancy) && e.x.Redundancy[s.Level] > 0 {
		n = e.x.Redundancy[s.Level]
	}
	for i := range n {
		id := s.ID
		switch {
		case s.Level == 0 && n > 1:
			id = fmt.Sprintf("%s-r%d", s.ID, i)
		case n > 1:
			id = fmt.Sprintf("%s-%d", s.ID, i+1)
		}
		e.addSwitch(id, s.ID)
		e.members[s.ID] = append(e.members[s.ID], id)
	}
	if s.Level == 0 && e.x.StorageHCA != "" {
		if id := e.storageLeaf(s.ID); !e.declared(id) {
			e.addSwitch(id, "")
		}
	}
	return nil
}

// storageLeaf returns the storage leaf of a model leaf.
func (e *expander) storageLeaf(leaf string) string {
	if e.x.StorageShared {
		return "storage"
	}
	return leaf + "-stor"
}

func (e *expander) declared(id string) bool {
	for _, s := range e.f.Switches {
		if s.ID == id {
			return true
		}
	}
	return false
}

// cable connects the next free ports of a and b, unless omitted.
func (e *expander) cable(a, b string, speed Speed) {
	if e.omit[a+" "+b] {
		return
	}
	e.ports[a]++
	e.ports[b]++
	e.f.Cables = append(e.f.Cables, Cable{A: a, APort: e.ports[a], B: b, BPort: e.ports[b], Speed: speed})
}

// cabled reports whether a and b are already cabled.
func (e *expander) cabled(a, b string) bool {
	for _, c := range e.f.Cables {
		if c.A == a && c.B == b || c.A == b && c.B == a {
			return true
		}
	}
	return false
}

// cableGroups cables the members of a model switch to those of its parent.
func (e *expander) cableGroups(child, parent string, speed Speed) {
	cs, ps := e.members[child], e.members[parent]
	planes := e.x.Planes && len(cs) == len(ps) && len(cs) > 1 && !slices.Contains(e.leafIDs(), child)
	for i, c := range cs {
		for j, p := range ps {
			if planes && i != j {
				continue
			}
			e.cable(c, p, speed)
		}
	}
	if e.x.StorageHCA != "" && slices.Contains(e.leafIDs(), child) {
		stor := e.storageLeaf(child)
		for _, p := range ps {
			if !e.cabled(stor, p) {
				e.cable(stor, p, speed)
			}
		}
	}
}

func (e *expander) leafIDs() []string {
	var out []string
	for _, s := range e.model.Switches() {
		if s.Level == 0 {
			out = append(out, s.ID)
		}
	}
	return out
}

func (e *expander) addHCA(host, name string) string {
	id := host + "/" + name
	guid := hcaGUIDBase + 0x10*uint64(len(e.f.HCAs)+1)
	e.f.HCAs = append(e.f.HCAs, HCA{ID: id, Host: host, Name: name, GUID: guid, Ports: 1})
	return id
}

func (e *expander) expandHost(n topology.Node) {
	leaf, _ := e.model.Switch(n.Leaf)
	speed, _ := speedOf(leaf.LinkSpeedGbps)
	for r, sw := range e.members[n.Leaf] {
		e.cable(e.addHCA(n.Name, fmt.Sprintf("mlx5_%d", r)), sw, speed)
	}
	if e.x.StorageHCA == "" {
		return
	}
	stor := e.storageLeaf(n.Leaf)
	e.cable(e.addHCA(n.Name, e.x.StorageHCA), stor, speed)
	if e.storageServed[stor] {
		return
	}
	e.storageServed[stor] = true
	for j := range e.x.StorageServers {
		e.cable(e.addHCA(fmt.Sprintf("%s-srv%d", stor, j+1), "mlx5_0"), stor, speed)
	}
}
