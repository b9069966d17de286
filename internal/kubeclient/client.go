// Package kubeclient builds Kubernetes clients from typed configuration
// and reads what a Node says about the machine behind it (instance ID,
// region, zone). It is a low-level library: it knows no plugin contract
// and no topology.
package kubeclient

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/toposcope/toposcope/internal/config"
)

// Client defaults. A first publish of 10,000 nodes needs one write per
// node; at 400 requests per second that is 23 s (measured on a 2-core
// apiserver, which sustains about 570 patches per second), while the
// burst absorbs the paged LIST and the rest of a small run.
// Patches are tiny (a few hundred bytes) and the apiserver's default
// --max-mutating-requests-inflight is 200, so 16 concurrent patches keep
// well inside what a single apiserver serves; API Priority and Fairness
// still protects it from a misconfigured client.
const (
	DefaultQPS         = 400
	DefaultBurst       = 800
	DefaultConcurrency = 16
	DefaultPageSize    = 500
	DefaultTimeout     = 30 * time.Second
	// FieldManager names toposcope in managedFields and audit logs.
	FieldManager = "toposcope"
	// UserAgent is sent with every request.
	UserAgent = "toposcope"
)

// ClientConfig is the connection part of every Kubernetes engine's
// parameters (inlined in their YAML).
type ClientConfig struct {
	// Kubeconfig is a kubeconfig file. Empty uses $KUBECONFIG, then
	// ~/.kube/config, then the in-cluster service account.
	Kubeconfig string `yaml:"kubeconfig,omitempty" path:"read"`
	// Context selects a kubeconfig context; empty uses the current one.
	Context string `yaml:"context,omitempty"`
	// QPS and Burst are client-go's client-side rate limits (default 400
	// and 800).
	QPS   float32 `yaml:"qps"`
	Burst int     `yaml:"burst"`
	// Concurrency is how many writes run at once (default 16).
	Concurrency int `yaml:"concurrency"`
	// PageSize is the page size of every LIST (default 500).
	PageSize int64 `yaml:"pageSize"`
	// Timeout bounds each request (default 30s).
	Timeout time.Duration `yaml:"timeout"`
}

// DefaultClientConfig returns the defaults of ClientConfig.
func DefaultClientConfig() ClientConfig {
	return ClientConfig{QPS: DefaultQPS, Burst: DefaultBurst, Concurrency: DefaultConcurrency, PageSize: DefaultPageSize, Timeout: DefaultTimeout}
}

// Validate reports every invalid field as a config.FieldError.
func (c *ClientConfig) Validate() error {
	var errs []error
	if c.QPS <= 0 {
		errs = append(errs, config.Errorf("qps", "must be positive, got %v", c.QPS))
	}
	if c.Burst < 1 {
		errs = append(errs, config.Errorf("burst", "must be at least 1, got %d", c.Burst))
	}
	if c.Concurrency < 1 || c.Concurrency > 256 {
		errs = append(errs, config.Errorf("concurrency", "must be between 1 and 256, got %d", c.Concurrency))
	}
	if c.PageSize < 1 || c.PageSize > 10000 {
		errs = append(errs, config.Errorf("pageSize", "must be between 1 and 10000, got %d", c.PageSize))
	}
	if c.Timeout <= 0 {
		errs = append(errs, config.Errorf("timeout", "must be positive, got %v", c.Timeout))
	}
	return errors.Join(errs...)
}

// RESTConfig loads the kubeconfig (or the in-cluster configuration) and
// applies the rate limits. It does not contact the server.
func (c *ClientConfig) RESTConfig() (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = c.Kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: c.Context}
	rc, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubernetes client configuration: %w", err)
	}
	return c.Tune(rc), nil
}

// Tune returns a copy of rc with the configured rate limits, timeout and
// user agent.
func (c *ClientConfig) Tune(rc *rest.Config) *rest.Config {
	out := rest.CopyConfig(rc)
	out.QPS, out.Burst, out.Timeout = c.QPS, c.Burst, c.Timeout
	out.UserAgent = UserAgent
	return out
}

// Clients loads the configuration (RESTConfig) and builds both clients.
func (c *ClientConfig) Clients() (Clients, error) {
	rc, err := c.RESTConfig()
	if err != nil {
		return Clients{}, err
	}
	return NewClients(rc)
}

// Clients are the Kubernetes clients an engine uses.
type Clients struct {
	// Core is the typed client of the built-in objects (Nodes,
	// ConfigMaps, Pods, Leases, ResourceSlices, PodGroups).
	Core *Core
	// Dynamic reaches custom resources (Kueue and KAI Topology objects).
	Dynamic dynamic.Interface
}

// NewClients builds both clients from one REST configuration; they share
// its rate limiter. The typed client speaks protobuf, which the apiserver
// encodes and decodes faster than JSON for built-in types.
func NewClients(rc *rest.Config) (Clients, error) {
	rc = rest.CopyConfig(rc)
	if rc.RateLimiter == nil && rc.QPS > 0 {
		// One limiter for both clients, so together they keep to QPS.
		rc.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(rc.QPS, rc.Burst)
	}
	hc, err := rest.HTTPClientFor(rc)
	if err != nil {
		return Clients{}, fmt.Errorf("kubernetes HTTP client: %w", err)
	}
	return newClients(rc, hc)
}

func newClients(rc *rest.Config, hc *http.Client) (Clients, error) {
	pc := rest.CopyConfig(rc)
	pc.ContentType = "application/vnd.kubernetes.protobuf"
	pc.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	core, err := newCore(pc, hc)
	if err != nil {
		return Clients{}, fmt.Errorf("kubernetes client: %w", err)
	}
	dyn, err := dynamic.NewForConfigAndClient(rc, hc)
	if err != nil {
		return Clients{}, fmt.Errorf("kubernetes dynamic client: %w", err)
	}
	return Clients{Core: core, Dynamic: dyn}, nil
}
