package infiniband

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/topology"
)

// NamingRules say how a CA's description names its host and HCA, which
// HCAs (rails) are used and which hosts are not compute nodes. The
// infiniband provider applies them to ibnetdiscover's node descriptions,
// the ufm provider to UFM's system_name (the same "<host> <HCA>"): one
// kit for both, inlined in both providers' parameters.
type NamingRules struct {
	// HostPattern is a regular expression matched against HCA node
	// descriptions (UFM's system_name); its named group "host" is the
	// host name and its optional group "hca" the HCA name (default
	// DefaultHostPattern). A host with several HCAs is one node.
	HostPattern string `yaml:"hostPattern,omitempty" request:"true"`
	// HCAs selects the HCAs of the fabric to use by name, as shell
	// patterns ("mlx5_0", "mlx5_[0-3]"). With neither HCAs nor HCAGUIDs,
	// every HCA is used.
	HCAs []string `yaml:"hcas,omitempty" request:"true"`
	// HCAGUIDs selects HCAs by node or port GUID (UFM: the system's
	// GUID), hex, 0x optional.
	HCAGUIDs []string `yaml:"hcaGUIDs,omitempty" request:"true"`
	// Ignore lists regular expressions of CA node descriptions that are
	// neither cluster hosts nor anything else (default: SHARP
	// "Aggregation Node"s).
	Ignore []string `yaml:"ignore,omitempty" request:"true"`
	// NotCompute lists shell patterns of host names that are not compute
	// nodes (a subnet manager or UFM host, a host whose rdma-ndd ran
	// before its hostname was set): with no nodes list they are left out
	// of the tree and never published as Slurm nodes (default
	// ["localhost", "localhost.*"]).
	NotCompute []string `yaml:"notCompute,omitempty" request:"true"`
}

// DefaultNamingRules are rdma-ndd's "<host> <hca>", every HCA, SHARP
// aggregation nodes ignored, localhost not a compute node.
func DefaultNamingRules() NamingRules {
	return NamingRules{HostPattern: DefaultHostPattern, Ignore: []string{`Aggregation Node`}, NotCompute: []string{"localhost", "localhost.*"}}
}

// Validate returns a config.FieldError for every invalid rule, keyed as
// the providers' parameters are (hostPattern, hcas[1], …).
func (r NamingRules) Validate() []error {
	var errs []error
	if _, err := compileHostPattern(r.HostPattern); err != nil {
		errs = append(errs, config.Errorf("hostPattern", "%v", err))
	}
	for i, g := range r.HCAs {
		if _, err := path.Match(g, "mlx5_0"); err != nil || g == "" {
			errs = append(errs, config.Errorf(fmt.Sprintf("hcas[%d]", i), "bad pattern %q", g))
		}
	}
	for i, g := range r.HCAGUIDs {
		if _, err := parseHex([]byte(g), 64); err != nil {
			errs = append(errs, config.Errorf(fmt.Sprintf("hcaGUIDs[%d]", i), "bad GUID %q: %v", g, err))
		}
	}
	for i, re := range r.Ignore {
		if _, err := regexp.Compile(re); err != nil {
			errs = append(errs, config.Errorf(fmt.Sprintf("ignore[%d]", i), "%v", err))
		}
	}
	for i, pat := range r.NotCompute {
		if _, err := path.Match(pat, ""); err != nil {
			errs = append(errs, config.Errorf(fmt.Sprintf("notCompute[%d]", i), "%v", err))
		}
	}
	return errs
}

func compileHostPattern(p string) (*regexp.Regexp, error) {
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, err
	}
	if re.SubexpIndex("host") < 0 {
		return nil, errors.New(`needs a named group (?P<host>...)`)
	}
	return re, nil
}

// Naming applies NamingRules.
type Naming struct {
	rules NamingRules
	desc  describer
	sel   selector
}

// NewNaming compiles r (validated by the caller).
func NewNaming(r NamingRules) (*Naming, error) {
	d, err := newDescriber(r)
	if err != nil {
		return nil, err
	}
	return &Naming{rules: r, desc: d, sel: newSelector(r)}, nil
}

// CAName is what the rules say of one CA.
type CAName struct {
	// Host and HCA are the names its description gives; Host is empty
	// when it names none (Unnamed) or is ignored.
	Host, HCA string
	// Ignored is a description Ignore matches.
	Ignored bool
	// Selected is an HCA the selection (HCAs, HCAGUIDs) uses.
	Selected bool
}

// Name names a CA by its description; guids are its node and port
// GUIDs, for HCAGUIDs.
func (n *Naming) Name(desc string, guids ...uint64) CAName {
	kind, host, hca := n.desc.parse(desc)
	return CAName{Host: host, HCA: hca, Ignored: kind == caIgnored, Selected: kind == caHost && n.sel.selects(hca, guids)}
}

// HostOnly names a CA that its source calls by the host's name alone (a
// node-name-map's, or a UFM system renamed to its host's): a name of one
// word that is a valid node name is the host, selected with every HCA or
// by its GUIDs; any other name names no host.
func (n *Naming) HostOnly(name string, guids ...uint64) CAName {
	if strings.ContainsAny(name, " \t") || topology.CheckNodeName(name) != nil {
		return CAName{}
	}
	return CAName{Host: name, Selected: n.sel.selects("", guids)}
}

// NotCompute reports whether host is no compute node.
func (n *Naming) NotCompute(host string) bool {
	for _, pat := range n.rules.NotCompute {
		if ok, _ := path.Match(pat, host); ok {
			return true
		}
	}
	return false
}

// AllHCAs reports whether every HCA is selected.
func (n *Naming) AllHCAs() bool { return n.sel.all() }

// Selection summarises the HCA selection for messages.
func (n *Naming) Selection() string {
	if n.sel.all() {
		return "every HCA"
	}
	var parts []string
	if len(n.rules.HCAs) > 0 {
		parts = append(parts, "hcas "+strings.Join(n.rules.HCAs, ","))
	}
	if len(n.rules.HCAGUIDs) > 0 {
		parts = append(parts, "hcaGUIDs "+strings.Join(n.rules.HCAGUIDs, ","))
	}
	return strings.Join(parts, " or ")
}
