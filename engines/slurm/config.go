package slurm

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/internal/slurmrest"
	"github.com/toposcope/toposcope/topology"
)

// Values of Config.Plugin.
const (
	// PluginTree writes topology.conf for topology/tree.
	PluginTree = "topology/tree"
	// PluginBlock writes topology.conf for topology/block (Slurm 23.11+).
	PluginBlock = "topology/block"
	// PluginYAML writes topology.yaml with several named topologies
	// (Slurm 25.05+).
	PluginYAML = "topology/yaml"
)

// Values of TopologyConfig.Plugin.
const (
	// KindTree is a switch tree.
	KindTree = "tree"
	// KindBlock is a list of blocks with aggregation sizes.
	KindBlock = "block"
	// KindFlat is no topology (every node equally close).
	KindFlat = "flat"
)

// Values of Config.SmallBlocks.
const (
	// SmallBlocksError refuses to render when, before Slurm 25.05, a block
	// is smaller than the base block size.
	SmallBlocksError = "error"
	// SmallBlocksDrop leaves such blocks out and reports their nodes in
	// Coverage.
	SmallBlocksDrop = "drop"
)

// maxBlockLevel is Slurm's MAX_BLOCK_LEVELS - 1: BlockSizes values are
// base × 2^k with k at most 15.
const maxBlockLevel = 15

// Config is the engine's typed configuration (the `params` of a `slurm`
// engine entry).
type Config struct {
	// Plugin selects the output: PluginTree (default), PluginBlock or
	// PluginYAML.
	Plugin string `yaml:"plugin" request:"true" enum:"topology/tree,topology/block,topology/yaml"`
	// SlurmVersion is the Slurm series that reads the file, "major.minor"
	// (default "24.11"), or "auto": the series VersionCommand prints,
	// read when the engine is built. The rules of that series decide
	// what is written.
	SlurmVersion string `yaml:"slurmVersion" request:"true"`
	// VersionCommand prints the Slurm version for slurmVersion: auto
	// (default ["scontrol", "--version"]).
	VersionCommand config.Command `yaml:"versionCommand,omitempty"`
	// BlockSizes are the topology/block sizes in nodes: the base block
	// size, then base × 2^k in ascending order. Empty means inferred.
	BlockSizes []int `yaml:"blockSizes,omitempty" request:"true"`
	// SmallBlocks says what to do, before Slurm 25.05, with a block
	// slurmctld would refuse for its size (smaller than the base size; on
	// 23.11 any other size). Unset (the default): with blockSizes
	// configured, leave it out and report its nodes in Coverage; with
	// none, choose a base that keeps every block, or fail naming the nodes
	// when none can (23.11). SmallBlocksDrop always leaves such blocks out
	// (reported), the base being the most common domain size when not
	// configured; SmallBlocksError refuses.
	SmallBlocks string `yaml:"smallBlocks,omitempty" request:"true"`
	// BlockName, for topology/block, names the blocks after their nodes
	// (Topograph's blockName) instead of their NVLink domains.
	BlockName *BlockName `yaml:"blockName,omitempty" request:"true"`
	// Topologies are the named topologies of topology.yaml. Empty means a
	// tree named "default" (the cluster default) plus a block topology
	// named "block" when the graph has accelerator domains.
	Topologies []TopologyConfig `yaml:"topologies,omitempty" request:"true"`
	// PartitionTopologies adds to topology.yaml one topology per Slurm
	// partition, named after it and covering its nodes, of this kind
	// (KindTree or KindBlock); slurm.conf then sets PartitionName=P
	// Topology=P. The partitions come from the nodes' slurmPartitions
	// attribute, which the slurm-nodes provider sets. Empty: none.
	PartitionTopologies string `yaml:"partitionTopologies,omitempty" request:"true"`
	// Slurmrestd is where a topology's partition is read from: Slurm's
	// REST API with a JSON Web Token (for a service with no scontrol at
	// hand, as on Slinky). Unset: the nodes' slurmPartitions attribute
	// (the slurm-nodes provider), else PartitionCommand.
	Slurmrestd *slurmrest.Config `yaml:"slurmrestd,omitempty"`
	// PartitionCommand prints Slurm's partitions, one a line, for a
	// topology's partition when neither slurmrestd nor the nodes'
	// attribute gives them (default ["scontrol", "-o", "show",
	// "partitions"]; empty turns it off).
	PartitionCommand config.Command `yaml:"partitionCommand,omitempty"`
	// Output is the file to write; empty writes the document to the
	// host's standard output (Deps.Stdout).
	Output string `yaml:"output,omitempty" path:"write"`
	// Reconfigure runs ReconfigureCommand after Output changed.
	Reconfigure bool `yaml:"reconfigure"`
	// ReconfigureCommand is the command that makes slurmctld reread the
	// file (default ["scontrol", "reconfigure"]); a string is split at white
	// space, as other commands are.
	ReconfigureCommand config.Command `yaml:"reconfigureCommand,omitempty"`
	// Header writes a comment block at the top of the file saying what
	// wrote it and what it leaves out (default true).
	Header bool `yaml:"header" request:"true"`
	// IDComments writes a "# name = "id"" comment above each switch or
	// block whose name differs from its provider ID (default true).
	IDComments bool `yaml:"idComments" request:"true"`
	// UnplacedSwitch, for topology/tree, is the switch that holds the
	// nodes the graph places under no switch: slurmctld never allocates a
	// node that no switch covers, and an operator would rather keep such
	// nodes usable (without locality) than lose them. They stay reported
	// in the header and the log. Empty leaves them out, reported as
	// uncovered (default "unplaced").
	UnplacedSwitch string `yaml:"unplacedSwitch" request:"true"`
}

// TopologyConfig is one named topology of topology.yaml.
type TopologyConfig struct {
	// Name is the topology's name, used by PartitionName=... Topology=.
	Name string `yaml:"name"`
	// Plugin is KindTree, KindBlock or KindFlat.
	Plugin string `yaml:"plugin"`
	// ClusterDefault marks the topology used by partitions that name none;
	// exactly one topology must set it.
	ClusterDefault bool `yaml:"clusterDefault"`
	// Nodes is an optional hostlist: the topology then covers only these
	// nodes.
	Nodes string `yaml:"nodes,omitempty"`
	// Partition is a Slurm partition whose nodes the topology covers
	// (instead of Nodes); a partition with no nodes gives a flat
	// topology, as Topograph does.
	Partition string `yaml:"partition,omitempty"`
	// BlockSizes are the block sizes of a block topology; empty means
	// inferred.
	BlockSizes []int `yaml:"blockSizes,omitempty"`
	// BlockName names a block topology's blocks after their nodes.
	BlockName *BlockName `yaml:"blockName,omitempty"`
}

// DefaultUnplacedSwitch is the default Config.UnplacedSwitch.
const DefaultUnplacedSwitch = "unplaced"

// DefaultConfig returns the configuration used when no params are given.
func DefaultConfig() Config {
	return Config{
		Plugin:             PluginTree,
		SlurmVersion:       DefaultVersion.String(),
		ReconfigureCommand: []string{"scontrol", "reconfigure"},
		VersionCommand:     []string{"scontrol", "--version"},
		PartitionCommand:   []string{"scontrol", "-o", "show", "partitions"},
		Header:             true,
		IDComments:         true,
		UnplacedSwitch:     DefaultUnplacedSwitch,
	}
}

// CLIFlags implements config.Flagged: --plugin, --slurm-version,
// --output and --reconfigure.
func (*Config) CLIFlags() []config.Flag {
	return []config.Flag{
		{Name: "plugin", Key: "plugin", Usage: "topology/tree, topology/block or topology/yaml"},
		{Name: "slurm-version", Key: "slurmVersion", Usage: "target Slurm version, e.g. 24.11"},
		{Name: "output", Key: "output", Usage: "output file (written atomically); default standard output"},
		{Name: "reconfigure", Key: "reconfigure", Bool: true, Usage: "after --output changed, run the engine's reconfigureCommand (default: scontrol reconfigure)"},
	}
}

// Validate reports every invalid field as a config.FieldError; a setting
// the target Slurm version cannot express also wraps
// engines.ErrInexpressible.
func (c *Config) Validate() error {
	var errs []error
	if c.UnplacedSwitch != "" && topology.SafeName(c.UnplacedSwitch) != c.UnplacedSwitch {
		errs = append(errs, config.Errorf("unplacedSwitch", "%q is not a switch name Slurm reads (letters, digits, - and _)", c.UnplacedSwitch))
	}
	var v Version
	verr := errAuto // auto: the checks that need the version wait for it
	if c.SlurmVersion != VersionAuto {
		if v, verr = ParseVersion(c.SlurmVersion); verr != nil {
			errs = append(errs, config.Errorf("slurmVersion", "%w", verr))
		}
	} else if len(c.VersionCommand) == 0 || c.VersionCommand[0] == "" {
		errs = append(errs, config.Errorf("versionCommand", "must name a command when slurmVersion is auto"))
	}
	switch c.Plugin {
	case PluginTree:
	case PluginBlock:
		if verr == nil && !v.AtLeast(V2311) {
			errs = append(errs, config.Errorf("plugin", "%s needs Slurm 23.11 or later, slurmVersion is %s: %w", c.Plugin, v, engines.ErrInexpressible))
		}
	case PluginYAML:
		if verr == nil && !v.AtLeast(V2505) {
			errs = append(errs, config.Errorf("plugin", "topology.yaml needs Slurm 25.05 or later, slurmVersion is %s: %w", v, engines.ErrInexpressible))
		}
	default:
		errs = append(errs, config.Errorf("plugin", "unknown plugin %q (want %s, %s or %s)%s", c.Plugin, PluginTree, PluginBlock, PluginYAML,
			didYouMean(c.Plugin, []string{PluginTree, PluginBlock, PluginYAML})))
	}
	if len(c.BlockSizes) > 0 {
		if c.Plugin != PluginBlock {
			errs = append(errs, config.Errorf("blockSizes", "is only used with plugin %s (for topology.yaml set topologies[].blockSizes)", PluginBlock))
		}
		if err := checkBlockSizes(c.BlockSizes); err != nil {
			errs = append(errs, config.Errorf("blockSizes", "%w", err))
		}
		if verr == nil && c.Plugin == PluginBlock && !v.AtLeast(V2405) {
			errs = append(errs, config.Errorf("blockSizes", "BlockSizes= needs Slurm 24.05 or later (%s reads BlockLevels=); leave blockSizes empty: %w", v, engines.ErrInexpressible))
		}
	}
	switch c.SmallBlocks {
	case "", SmallBlocksError, SmallBlocksDrop:
	default:
		errs = append(errs, config.Errorf("smallBlocks", "unknown value %q (want %q or %q)", c.SmallBlocks, SmallBlocksError, SmallBlocksDrop))
	}
	if c.BlockName != nil {
		errs = append(errs, c.BlockName.validate("blockName")...)
		if c.Plugin != PluginBlock {
			errs = append(errs, config.Errorf("blockName", "is only used with plugin %s (in topology/yaml, give it to a block topology)", PluginBlock))
		}
	}
	if len(c.Topologies) > 0 && c.Plugin != PluginYAML {
		errs = append(errs, config.Errorf("topologies", "is only used with plugin %s", PluginYAML))
	}
	errs = append(errs, validateTopologies(c.Topologies)...)
	switch c.PartitionTopologies {
	case "", KindTree, KindBlock:
	default:
		errs = append(errs, config.Errorf("partitionTopologies", "must be %q or %q, got %q", KindTree, KindBlock, c.PartitionTopologies))
	}
	if c.PartitionTopologies != "" && c.Plugin != PluginYAML {
		errs = append(errs, config.Errorf("partitionTopologies", "is only used with plugin %s", PluginYAML))
	}
	if c.Slurmrestd != nil {
		if err := c.Slurmrestd.Validate(); err != nil {
			errs = append(errs, config.PrefixFields("slurmrestd", err))
		}
	}
	if c.Reconfigure {
		if c.Output == "" {
			errs = append(errs, config.Errorf("reconfigure", "needs output: without a file there is nothing for slurmctld to reread"))
		}
		if len(c.ReconfigureCommand) == 0 || c.ReconfigureCommand[0] == "" {
			errs = append(errs, config.Errorf("reconfigureCommand", "must name a command when reconfigure is true"))
		}
	}
	return config.Join(errs...)
}

// validateTopologies checks the topology.yaml entries.
func validateTopologies(ts []TopologyConfig) []error {
	var errs []error
	defaults := 0
	seen := make(map[string]bool, len(ts))
	for i, t := range ts {
		key := fmt.Sprintf("topologies[%d]", i)
		switch {
		case t.Name == "":
			errs = append(errs, config.Errorf(key+".name", "is required"))
		case !safeUnitName(t.Name):
			errs = append(errs, config.Errorf(key+".name", "%q: use only letters, digits, '-' and '_' (at most 64), starting with a letter or digit", t.Name))
		case seen[t.Name]:
			errs = append(errs, config.Errorf(key+".name", "%q is used twice", t.Name))
		}
		seen[t.Name] = true
		switch t.Plugin {
		case KindTree, KindFlat:
			if len(t.BlockSizes) > 0 {
				errs = append(errs, config.Errorf(key+".blockSizes", "is only used with plugin %s", KindBlock))
			}
			if t.BlockName != nil {
				errs = append(errs, config.Errorf(key+".blockName", "is only used with plugin %s", KindBlock))
			}
		case KindBlock:
			if err := checkBlockSizes(t.BlockSizes); err != nil {
				errs = append(errs, config.Errorf(key+".blockSizes", "%w", err))
			}
			if t.BlockName != nil {
				errs = append(errs, t.BlockName.validate(key+".blockName")...)
			}
		default:
			errs = append(errs, config.Errorf(key+".plugin", "unknown plugin %q (want %s, %s or %s)", t.Plugin, KindTree, KindBlock, KindFlat))
		}
		switch {
		case t.Partition != "" && t.Nodes != "":
			errs = append(errs, config.Errorf(key+".partition", "and nodes are alternatives: set one"))
		case t.Partition != "" && t.Plugin == KindFlat:
			errs = append(errs, config.Errorf(key+".partition", "is not used by a flat topology, which covers every node"))
		case t.Partition != "" && !partitionName(t.Partition):
			errs = append(errs, config.Errorf(key+".partition", "%q is not a Slurm partition name", t.Partition))
		}
		if t.Nodes != "" && t.Plugin == KindFlat {
			errs = append(errs, config.Errorf(key+".nodes", "is not used by a flat topology, which covers every node"))
		} else if t.Nodes != "" {
			if _, err := hostlist.Expand(t.Nodes); err != nil {
				errs = append(errs, config.Errorf(key+".nodes", "%w", err))
			}
		}
		if t.ClusterDefault {
			defaults++
		}
	}
	if len(ts) > 0 && defaults != 1 {
		errs = append(errs, config.Errorf("topologies", "exactly one topology must set clusterDefault: true, %d do", defaults))
	}
	return errs
}

// ErrBlockSizes is wrapped when block sizes break Slurm's BlockSizes rule.
var ErrBlockSizes = errors.New("invalid block sizes")

// checkBlockSizes applies Slurm's rule: positive, each value base × 2^k
// with k ≤ 15, strictly ascending. An empty list is valid (inferred).
func checkBlockSizes(sizes []int) error {
	if len(sizes) == 0 {
		return nil
	}
	base := sizes[0]
	if base <= 0 {
		return fmt.Errorf("base size %d must be positive: %w", base, ErrBlockSizes)
	}
	for i, s := range sizes {
		if i > 0 && s <= sizes[i-1] {
			return fmt.Errorf("%v: sizes must be strictly ascending: %w", sizes, ErrBlockSizes)
		}
		if s%base != 0 || bits.OnesCount(uint(s/base)) != 1 {
			return fmt.Errorf("%d is not the base size %d times a power of two: %w", s, base, ErrBlockSizes)
		}
		if k := bits.TrailingZeros(uint(s / base)); k > maxBlockLevel {
			return fmt.Errorf("%d is %d × 2^%d; Slurm allows at most 2^%d: %w", s, base, k, maxBlockLevel, ErrBlockSizes)
		}
	}
	return nil
}

// safeUnitName reports whether s is usable verbatim as a Slurm topology,
// switch or block name: letters, digits, '-' and '_', at most 64 bytes,
// starting with a letter or digit.
func safeUnitName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '-' && c != '_') {
			return false
		}
	}
	return true
}

// partitionName reports whether s can be a Slurm partition name: not
// empty, at most 64 bytes, no white space, commas or control characters.
func partitionName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if r <= ' ' || r == ',' || r == 0x7f {
			return false
		}
	}
	return true
}

// didYouMean is "; did you mean X?" for the known value closest to v, or "".
func didYouMean(v string, known []string) string {
	if s := config.Suggest(v, known); s != "" {
		return fmt.Sprintf("; did you mean %q?", s)
	}
	return ""
}
