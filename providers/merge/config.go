package merge

import (
	"errors"
	"fmt"
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/providers/agents"
)

// What a source contributes (Source.Use).
const (
	// UseTree takes the source's switch tree (the node's leaf and the
	// switches above it).
	UseTree = "tree"
	// UseDomains takes the source's accelerator domains and sub-domains.
	UseDomains = "domains"
)

// Values of Config.Match: how a source's node is matched to a node of the
// merged graph.
const (
	// MatchName matches by node name only.
	MatchName = "name"
	// MatchNameOrInstanceID matches by name, and by instance ID a node
	// whose name is not known yet (default).
	MatchNameOrInstanceID = "name-or-instance-id"
	// MatchInstanceID matches by instance ID first, and by name a node
	// without a known instance ID.
	MatchInstanceID = "instance-id"
)

// Values of Config.Conflicts.
const (
	// ConflictsError fails the discovery on any conflict (default).
	ConflictsError = "error"
	// ConflictsFirst keeps what the earlier source (in list order) says
	// and logs a warning for each conflict.
	ConflictsFirst = "first"
)

// Values of Source.OnConflict.
const (
	// OnConflictPolicy follows Config.Conflicts (default, except for the
	// agents provider).
	OnConflictPolicy = "policy"
	// OnConflictYield drops this source's facts of a node where another
	// source disagrees, and leaves out the nodes only yielding sources
	// know, with a warning listing them and a metric: for sources that
	// nodes report themselves (default for the agents provider).
	OnConflictYield = "yield"
)

// Values of Config.UnknownNodes and Source.UnknownNodes.
const (
	// UnknownWarn logs the nodes a source does not know (default).
	UnknownWarn = "warn"
	// UnknownError fails the discovery.
	UnknownError = "error"
	// UnknownIgnore says nothing.
	UnknownIgnore = "ignore"
)

// Source is one provider whose graph is merged.
type Source struct {
	// Name labels the source in messages; default the provider name,
	// with "#<index>" when a provider is listed twice.
	Name string `yaml:"name,omitempty"`
	// Provider is the registered provider name.
	Provider string `yaml:"provider"`
	// Params are the provider's parameters (a mapping).
	Params any `yaml:"params,omitempty"`
	// Use lists what the source contributes: UseTree, UseDomains
	// (default both).
	Use []string `yaml:"use,omitempty"`
	// UnknownNodes overrides Config.UnknownNodes for this source.
	UnknownNodes string `yaml:"unknownNodes,omitempty"`
	// OnConflict is OnConflictPolicy or OnConflictYield; default yield
	// for the agents provider, policy for the others.
	OnConflict string `yaml:"onConflict,omitempty"`
}

// Config is the merge provider's configuration.
type Config struct {
	// Sources are merged in order; earlier sources win with
	// ConflictsFirst, and name the nodes.
	Sources []Source `yaml:"sources"`
	// Match is MatchNameOrInstanceID (default), MatchName or
	// MatchInstanceID.
	Match string `yaml:"match" request:"true"`
	// Conflicts is ConflictsError (default) or ConflictsFirst. A
	// conflict is a node that two sources place differently (two leaf
	// switches, two domains or sub-domains), whose identity they
	// disagree on (instance ID, region, zone, GPUs, an attribute), or
	// that two nodes of one source both match.
	Conflicts string `yaml:"conflicts" request:"true"`
	// UnknownNodes is UnknownWarn (default), UnknownError or
	// UnknownIgnore: what to do with a node that a source does not
	// know or places nowhere in what it contributes.
	UnknownNodes string `yaml:"unknownNodes" request:"true"`
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{Match: MatchNameOrInstanceID, Conflicts: ConflictsError, UnknownNodes: UnknownWarn}
}

// Validate reports every invalid field as config.FieldErrors.
func (c *Config) Validate() error {
	var errs []error
	if len(c.Sources) == 0 {
		errs = append(errs, config.Errorf("sources", "list at least one source"))
	}
	names := map[string]int{}
	for i, s := range c.Sources {
		field := fmt.Sprintf("sources[%d]", i)
		if s.Provider == "" {
			errs = append(errs, config.Errorf(field+".provider", "required"))
		}
		for j, u := range s.Use {
			if u != UseTree && u != UseDomains {
				errs = append(errs, config.Errorf(fmt.Sprintf("%s.use[%d]", field, j), "must be %q or %q, got %q", UseTree, UseDomains, u))
			}
		}
		if s.UnknownNodes != "" {
			errs = append(errs, checkUnknown(field+".unknownNodes", s.UnknownNodes))
		}
		if s.OnConflict != "" && s.OnConflict != OnConflictPolicy && s.OnConflict != OnConflictYield {
			errs = append(errs, config.Errorf(field+".onConflict", "must be %q or %q, got %q", OnConflictPolicy, OnConflictYield, s.OnConflict))
		}
		if _, err := paramsNode(s.Params); err != nil {
			errs = append(errs, config.Errorf(field+".params", "%v", err))
		}
		name := c.sourceName(i)
		if j, ok := names[name]; ok {
			errs = append(errs, config.Errorf(field+".name", "%q is also the name of sources[%d]", name, j))
		}
		names[name] = i
	}
	if !slices.Contains([]string{MatchName, MatchNameOrInstanceID, MatchInstanceID}, c.Match) {
		errs = append(errs, config.Errorf("match", "must be %q, %q or %q, got %q", MatchNameOrInstanceID, MatchName, MatchInstanceID, c.Match))
	}
	if c.Conflicts != ConflictsError && c.Conflicts != ConflictsFirst {
		errs = append(errs, config.Errorf("conflicts", "must be %q or %q, got %q", ConflictsError, ConflictsFirst, c.Conflicts))
	}
	errs = append(errs, checkUnknown("unknownNodes", c.UnknownNodes))
	return config.Join(errs...)
}

func checkUnknown(field, v string) error {
	if v != UnknownWarn && v != UnknownError && v != UnknownIgnore {
		return config.Errorf(field, "must be %q, %q or %q, got %q", UnknownWarn, UnknownError, UnknownIgnore, v)
	}
	return nil
}

// sourceName is the name of source i in messages.
func (c *Config) sourceName(i int) string {
	s := c.Sources[i]
	if s.Name != "" {
		return s.Name
	}
	for j, o := range c.Sources {
		if j != i && o.Name == "" && o.Provider == s.Provider {
			return fmt.Sprintf("%s#%d", s.Provider, i)
		}
	}
	return s.Provider
}

// uses reports whether source i contributes what.
func (c *Config) uses(i int, what string) bool {
	u := c.Sources[i].Use
	return len(u) == 0 || slices.Contains(u, what)
}

// yields reports whether source i gives way on a conflict.
func (c *Config) yields(i int) bool {
	switch c.Sources[i].OnConflict {
	case OnConflictYield:
		return true
	case OnConflictPolicy:
		return false
	}
	return c.Sources[i].Provider == agents.Name
}

// unknownPolicy is source i's UnknownNodes policy.
func (c *Config) unknownPolicy(i int) string {
	if v := c.Sources[i].UnknownNodes; v != "" {
		return v
	}
	return c.UnknownNodes
}

// paramsNode turns decoded parameters back into a YAML mapping node (nil
// for none).
func paramsNode(params any) (*yaml.Node, error) {
	if params == nil {
		return nil, nil
	}
	if n, ok := params.(*yaml.Node); ok {
		return n, nil
	}
	var n yaml.Node
	if err := n.Encode(params); err != nil {
		return nil, err
	}
	if n.Kind != yaml.MappingNode {
		return nil, errors.New("must be a mapping")
	}
	return &n, nil
}
