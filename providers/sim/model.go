package sim

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"

	"github.com/toposcope/toposcope/internal/bounded"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/topology"
)

// bundledFS holds the bundled models, one YAML file per model. It is
// read-only.
//
//go:embed models/*.yaml
var bundledFS embed.FS

// bundledNames lists the bundled models in the order Bundled reports them.
func bundledNames() []string {
	return []string{"small-tree", "fat-tree-512", "venus-1080", "nvl72", "mixed", "topograph-medium", "topograph-small-tree", "topograph-large"}
}

// Info describes a model, as listed by Bundled.
type Info struct {
	// Name is the model's name (for a bundled model, what Load accepts).
	Name string `json:"name"`
	// Description says what the model simulates.
	Description string `json:"description"`
	// Nodes is the number of nodes in the model.
	Nodes int `json:"nodes"`
}

// Model is a parsed and validated cluster model. It is immutable and safe
// for concurrent use; Graph builds a topology.Graph from it.
type Model struct {
	name        string
	description string
	source      string

	switches []mswitch
	domains  []mdomain
	subs     []msub
	groups   []facts // node groups, defaults applied
	defaults facts
	nodes    []mnode

	// byName is made on first use (nameIndex): generate, which asks
	// for every node, never looks one up.
	byName     map[string]int32
	nameOnce   sync.Once
	byInstance map[string]int32
}

// nameIndex returns the index of the nodes' names.
func (m *Model) nameIndex() map[string]int32 {
	m.nameOnce.Do(func() {
		if m.byName == nil {
			m.byName = make(map[string]int32, len(m.nodes))
			for i := range m.nodes {
				m.byName[m.nodes[i].name] = int32(i)
			}
		}
	})
	return m.byName
}

// facts are the per-node facts a node group (or the defaults) gives.
type facts struct {
	gpus   int
	region string
	zone   string
	attrs  map[string]string
}

// mswitch is one switch of the model; parent is an index into
// Model.switches, -1 for a root.
type mswitch struct {
	info   topology.SwitchInfo
	parent int32
}

// mdomain is one accelerator domain of the model.
type mdomain struct {
	id string
}

// msub is one sub-domain; domain is an index into Model.domains.
type msub struct {
	id     string
	domain int32
}

// mnode is one node of the model. leaf, domain, sub and group are indexes
// into the Model's tables, -1 for none.
type mnode struct {
	name       string
	instanceID string
	leaf       int32
	domain     int32
	sub        int32
	group      int32
}

// Info returns the model's name, description and node count.
func (m *Model) Info() Info {
	return Info{Name: m.name, Description: m.description, Nodes: len(m.nodes)}
}

// Source returns where the model was read from: "bundled:NAME", a file
// path, or the source given to Parse.
func (m *Model) Source() string { return m.source }

// Bundled lists the bundled models in a fixed order.
func Bundled() []Info {
	names := bundledNames()
	out := make([]Info, 0, len(names))
	for _, name := range names {
		m, err := loadBundled(name)
		if err != nil {
			// Unreachable: every bundled model is parsed by the tests.
			out = append(out, Info{Name: name, Description: "invalid bundled model: " + err.Error()})
			continue
		}
		out = append(out, m.Info())
	}
	return out
}

// Load returns the bundled model called nameOrPath or, when there is no
// such bundled model, the model in the file at path nameOrPath.
func Load(nameOrPath string) (*Model, error) {
	for _, name := range bundledNames() {
		if name == nameOrPath {
			return loadBundled(name)
		}
	}
	data, err := bounded.ReadFile(nameOrPath, providers.MaxSourceBytes)
	if errors.Is(err, fs.ErrNotExist) {
		hint := ""
		if s := config.Suggest(nameOrPath, bundledNames()); s != "" {
			hint = fmt.Sprintf("; did you mean %q?", s)
		}
		return nil, fmt.Errorf("model %q is neither a bundled model (%s) nor a file (%w)%s",
			nameOrPath, strings.Join(bundledNames(), ", "), err, hint)
	}
	if err != nil {
		return nil, fmt.Errorf("read model: %w", err)
	}
	return Parse(data, nameOrPath)
}

func loadBundled(name string) (*Model, error) {
	data, err := bundledFS.ReadFile("models/" + name + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("bundled model %q: %w", name, err)
	}
	return Parse(data, "bundled:"+name)
}

// factsOf returns the facts of node n: its group's, else the defaults.
func (m *Model) factsOf(n *mnode) *facts {
	if n.group >= 0 {
		return &m.groups[n.group]
	}
	return &m.defaults
}

// LoadGraph loads a model as Load does and returns its whole graph.
func LoadGraph(nameOrPath string) (*topology.Graph, error) {
	m, err := Load(nameOrPath)
	if err != nil {
		return nil, err
	}
	return m.Graph(providers.Request{})
}
