package infiniband

import (
	"strings"
	"time"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/internal/kubeclient"
)

// Values of Config.SwitchIDs.
const (
	// SwitchIDsGUID names switches by node GUID (16 hex digits).
	SwitchIDsGUID = "guid"
	// SwitchIDsName names switches by the name in their node description
	// ("MF0;<name>:<model>/U1" gives <name>; otherwise the whole
	// description). Two switches with the same name are an error.
	SwitchIDsName = "name"
)

// DefaultHostPattern matches the node descriptions rdma-ndd sets,
// "<hostname> <hca>" (e.g. "gpu001 mlx5_0"). Descriptions with more words,
// such as the "MT4129 ConnectX7 Mellanox Technologies" of an HCA without
// rdma-ndd, do not match: such HCAs are unnamed.
const DefaultHostPattern = `^(?P<host>\S+)\s+(?P<hca>\S+)$`

// DefaultTimeout bounds one run of the ibnetdiscover command.
const DefaultTimeout = 5 * time.Minute

// Config is the infiniband provider's configuration. Exactly one of
// Output, Command and OutputText is the source of ibnetdiscover output;
// with none, the command `ibnetdiscover` is run.
type Config struct {
	// Output is a file holding saved ibnetdiscover output (the CLI's
	// --ibnetdiscover-output).
	Output string `yaml:"output,omitempty" path:"read"`
	// Command runs ibnetdiscover and reads its standard output (the
	// CLI's --ibnetdiscover-command), e.g. "ssh ib01 sudo ibnetdiscover"
	// or "ibsim-run ibnetdiscover".
	Command config.Command `yaml:"command,omitempty"`
	// OutputText is ibnetdiscover output given inline (examples, tests).
	OutputText string `yaml:"outputText,omitempty"`
	// ConfigMap, "namespace/name", is the fabric report ConfigMap that
	// `toposcope fabric-report` writes on a node with an HCA (the
	// chart's fabricReporter): read at each discovery instead of running
	// ibnetdiscover, for clusters with no host to run it from.
	ConfigMap string `yaml:"configMap,omitempty"`
	// Kubernetes is the connection that reads ConfigMap.
	Kubernetes kubeclient.ClientConfig `yaml:"kubernetes,omitempty"`
	// NodeNameMap is an OpenSM node-name-map file (`0x<node GUID>
	// "name"` per line, # comments), read at each discovery: a mapped
	// node is named as `ibnetdiscover --node-name-map` would name it,
	// before hostPattern applies; a CA mapped to a host name alone is
	// that host. For fabrics whose HCAs carry generic descriptions.
	NodeNameMap string `yaml:"nodeNameMap,omitempty" path:"read"`
	// Timeout bounds one run of Command (default DefaultTimeout).
	Timeout time.Duration `yaml:"timeout,omitempty"`
	// NamingRules are hostPattern, hcas, hcaGUIDs, ignore and notCompute.
	NamingRules `yaml:",inline"`
	// Nodes is a hostlist of the cluster's hosts; empty means every host
	// with a selected HCA. HCAs of other hosts mark their switch as not
	// part of the cluster's tree.
	Nodes string `yaml:"nodes,omitempty" request:"true"`
	// SwitchIDs is SwitchIDsGUID (default) or SwitchIDsName.
	SwitchIDs string `yaml:"switchIDs,omitempty" request:"true" enum:"guid,name"`
}

// DefaultConfig returns the defaults: run `ibnetdiscover`, every HCA,
// rdma-ndd descriptions, GUID switch IDs.
func DefaultConfig() Config {
	return Config{
		Timeout:     DefaultTimeout,
		Kubernetes:  kubeclient.DefaultClientConfig(),
		NamingRules: DefaultNamingRules(),
		SwitchIDs:   SwitchIDsGUID,
	}
}

// CLIFlags implements config.Flagged: --ibnetdiscover-output and
// --ibnetdiscover-command.
func (*Config) CLIFlags() []config.Flag {
	return []config.Flag{
		{Name: "ibnetdiscover-output", Key: "output", Usage: "read saved ibnetdiscover output from FILE"},
		{Name: "ibnetdiscover-command", Key: "command", Usage: "run CMD (split at spaces and run without a shell, e.g. 'ssh head1 ibnetdiscover') to get ibnetdiscover output"},
	}
}

// Validate reports every invalid field as config.FieldErrors.
func (c *Config) Validate() error {
	var errs []error
	sources := 0
	for _, set := range []bool{c.Output != "", len(c.Command) > 0, c.OutputText != "", c.ConfigMap != ""} {
		if set {
			sources++
		}
	}
	if sources > 1 {
		errs = append(errs, config.Errorf("output", "output, command, outputText and configMap are alternatives: set one"))
	}
	if c.ConfigMap != "" {
		if ns, name, ok := strings.Cut(c.ConfigMap, "/"); !ok || ns == "" || name == "" || strings.Contains(name, "/") {
			errs = append(errs, config.Errorf("configMap", "want namespace/name, got %q", c.ConfigMap))
		}
		errs = append(errs, c.Kubernetes.Validate())
	}
	errs = append(errs, c.Command.Check("command"))
	if c.Timeout <= 0 {
		errs = append(errs, config.Errorf("timeout", "must be positive, e.g. 5m"))
	}
	errs = append(errs, c.NamingRules.Validate()...)
	if c.Nodes != "" {
		if _, err := hostlist.Expand(c.Nodes); err != nil {
			errs = append(errs, config.Errorf("nodes", "%v", err))
		}
	}
	if c.SwitchIDs != SwitchIDsGUID && c.SwitchIDs != SwitchIDsName {
		errs = append(errs, config.Errorf("switchIDs", "must be %q or %q, not %q", SwitchIDsGUID, SwitchIDsName, c.SwitchIDs))
	}
	return config.Join(errs...)
}
