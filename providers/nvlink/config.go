package nvlink

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/topology"
)

// Values of Config.FailedNodes.
const (
	// FailedNodesError makes a node whose GPUs cannot be read (command
	// failed, output garbled, fabric not ready, mixed cliques) fail the
	// discovery.
	FailedNodesError = "error"
	// FailedNodesUnplaced keeps such a node, in no domain, and logs a
	// warning.
	FailedNodesUnplaced = "unplaced"
)

// NodePlaceholder is replaced in Config.Command by the node name,
// shell-quoted.
const NodePlaceholder = "{node}"

// Defaults.
const (
	DefaultParallel = 16
	DefaultTimeout  = 30 * time.Second
)

// Config is the nvlink provider's configuration. Exactly one of Command,
// OutputDir, Outputs and Cliques is the source.
type Config struct {
	// Command is run for each node, directly (no shell), with {node} in
	// its arguments replaced by the node name, e.g. [ssh, "{node}",
	// nvidia-smi, -q] or "ssh {node} nvidia-smi
	// --query-gpu=fabric.clusterUuid,fabric.cliqueId --format=csv,noheader".
	Command config.Command `yaml:"command,omitempty"`
	// OutputDir holds saved nvidia-smi output, one file per node named
	// <node>, <node>.csv or <node>.txt.
	OutputDir string `yaml:"outputDir,omitempty" path:"read"`
	// Outputs are nvidia-smi outputs inline, by node.
	Outputs map[string]string `yaml:"outputs,omitempty"`
	// Cliques are nvidia.com/gpu.clique label values
	// ("<ClusterUUID>.<CliqueID>"), by node.
	Cliques map[string]string `yaml:"cliques,omitempty" request:"true"`
	// Format is FormatAuto (default), FormatCSV or FormatQuery.
	Format string `yaml:"format,omitempty" request:"true"`
	// Nodes is a hostlist of the nodes to ask when the request names
	// none (default: the nodes of Outputs, Cliques or OutputDir).
	Nodes string `yaml:"nodes,omitempty" request:"true"`
	// Parallel is how many nodes Command runs on at once (default 16).
	Parallel int `yaml:"parallel,omitempty"`
	// Timeout bounds Command on one node (default 30s).
	Timeout time.Duration `yaml:"timeout,omitempty"`
	// FailedNodes is FailedNodesError (default) or FailedNodesUnplaced.
	FailedNodes string `yaml:"failedNodes,omitempty" request:"true"`
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{Format: FormatAuto, Parallel: DefaultParallel, Timeout: DefaultTimeout, FailedNodes: FailedNodesError}
}

// Validate reports every invalid field as config.FieldErrors.
func (c *Config) Validate() error {
	var errs []error
	n := 0
	for _, set := range []bool{len(c.Command) > 0, c.OutputDir != "", len(c.Outputs) > 0, len(c.Cliques) > 0} {
		if set {
			n++
		}
	}
	switch {
	case n == 0:
		errs = append(errs, config.Errorf("command", "set one of command, outputDir, outputs and cliques"))
	case n > 1:
		errs = append(errs, config.Errorf("command", "command, outputDir, outputs and cliques are alternatives: set one"))
	}
	errs = append(errs, c.Command.Check("command"))
	if len(c.Command) > 0 && !strings.Contains(c.Command.String(), NodePlaceholder) {
		errs = append(errs, config.Errorf("command", "must contain %s (where the node name goes)", NodePlaceholder))
	}
	for _, node := range sortedKeys(c.Outputs) {
		if err := topology.CheckNodeName(node); err != nil {
			errs = append(errs, config.Errorf("outputs."+node, "%v", err))
		}
	}
	for _, node := range sortedKeys(c.Cliques) {
		if _, err := ParseCliqueLabel(c.Cliques[node]); err != nil {
			errs = append(errs, config.Errorf("cliques."+node, "%v", err))
		}
	}
	if c.Format != FormatAuto && c.Format != FormatCSV && c.Format != FormatQuery {
		errs = append(errs, config.Errorf("format", "must be %q, %q or %q", FormatAuto, FormatCSV, FormatQuery))
	}
	if c.Nodes != "" {
		if _, err := hostlist.Expand(c.Nodes); err != nil {
			errs = append(errs, config.Errorf("nodes", "%v", err))
		}
	}
	if c.Parallel < 1 || c.Parallel > 1024 {
		errs = append(errs, config.Errorf("parallel", "must be between 1 and 1024"))
	}
	if c.Timeout <= 0 {
		errs = append(errs, config.Errorf("timeout", "must be positive"))
	}
	if c.FailedNodes != FailedNodesError && c.FailedNodes != FailedNodesUnplaced {
		errs = append(errs, config.Errorf("failedNodes", "must be %q or %q", FailedNodesError, FailedNodesUnplaced))
	}
	return config.Join(errs...)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// command returns the arguments to run for one node.
func (c Config) command(node string) []string {
	argv := make([]string, len(c.Command))
	for i, a := range c.Command {
		argv[i] = strings.ReplaceAll(a, NodePlaceholder, node)
	}
	return argv
}

// describe names the source in messages.
func (c Config) describe() string {
	switch {
	case len(c.Command) > 0:
		return fmt.Sprintf("command %q", c.Command.String())
	case c.OutputDir != "":
		return "outputDir " + c.OutputDir
	case len(c.Cliques) > 0:
		return "cliques"
	}
	return "outputs"
}
