package aws

import (
	"fmt"
	"net/url"
	"time"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/httpretry"
)

// Defaults of Config.
const (
	// DefaultPageSize is MaxResults when paging over a region.
	DefaultPageSize = 100
	// DefaultTimeout bounds one discovery.
	DefaultTimeout = 5 * time.Minute
	// maxIDsPerCall is the API's limit on InstanceId.N.
	maxIDsPerCall = 100
)

// Config is the aws provider's configuration.
type Config struct {
	// Region is the EC2 region of the nodes a request gives no region
	// for (nodes[].region), and of a discovery of everything. Empty: the
	// SDK's region (AWS_REGION, the shared config, or IMDS on EC2).
	Region string `yaml:"region,omitempty" request:"true"`
	// Endpoint overrides the EC2 endpoint (private endpoint, proxy,
	// emulator), e.g. https://ec2.us-west-2.amazonaws.com.
	Endpoint string `yaml:"endpoint,omitempty"`
	// CredentialsFile is a shared-credentials (INI) file; Profile picks
	// its section (default "default").
	CredentialsFile string `yaml:"credentialsFile,omitempty" path:"read"`
	Profile         string `yaml:"profile,omitempty"`
	// Anonymous sends unsigned requests (emulators only).
	Anonymous bool `yaml:"anonymous,omitempty"`
	// PageSize is MaxResults when paging, 1-100 (default 100).
	PageSize int `yaml:"pageSize,omitempty"`
	// Timeout bounds one discovery (default 5m).
	Timeout time.Duration `yaml:"timeout,omitempty"`
	// Retry is the policy for throttling (RequestLimitExceeded), 5xx and
	// connection failures: capped exponential backoff with jitter.
	Retry httpretry.Policy `yaml:"retry,omitempty"`
	// Nodes maps instance IDs to node names; an instance not listed is
	// named by its ID.
	Nodes map[string]string `yaml:"nodes,omitempty" request:"true"`
	// Snapshot, when set, is used instead of calling EC2: the API's
	// instances, inline (examples, tests, saved captures).
	Snapshot []SnapshotInstance `yaml:"snapshot,omitempty"`
}

// SnapshotInstance is one InstanceTopology of a saved answer.
type SnapshotInstance struct {
	InstanceID       string   `yaml:"instanceId"`
	InstanceType     string   `yaml:"instanceType,omitempty"`
	AvailabilityZone string   `yaml:"availabilityZone,omitempty"`
	NetworkNodes     []string `yaml:"networkNodes,omitempty"` // root first, as in the API
	CapacityBlockID  string   `yaml:"capacityBlockId,omitempty"`
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{PageSize: DefaultPageSize, Timeout: DefaultTimeout, Profile: "default"}
}

// Validate reports every invalid field as config.FieldErrors.
func (c *Config) Validate() error {
	var errs []error
	if c.Endpoint != "" {
		u, err := url.Parse(c.Endpoint)
		switch {
		case err != nil:
			errs = append(errs, config.Errorf("endpoint", "%v", err))
		case u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
			errs = append(errs, config.Errorf("endpoint", "want http(s)://host[:port]"))
		case u.User != nil:
			errs = append(errs, config.Errorf("endpoint", "must not hold credentials"))
		}
	}
	if c.PageSize < 1 || c.PageSize > 100 {
		errs = append(errs, config.Errorf("pageSize", "must be between 1 and 100, not %d", c.PageSize))
	}
	if c.Timeout <= 0 {
		errs = append(errs, config.Errorf("timeout", "must be positive"))
	}
	errs = append(errs, config.PrefixFields("retry", c.Retry.Validate()))
	for i, s := range c.Snapshot {
		if s.InstanceID == "" {
			errs = append(errs, config.Errorf(fmt.Sprintf("snapshot[%d].instanceId", i), "is required"))
		}
	}
	return config.Join(errs...)
}
