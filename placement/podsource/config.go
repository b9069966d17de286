// Package podsource is the Kubernetes ledger source: GPU pods bound to
// nodes become placement ledger records. The account comes from a pod
// label, else a namespace mapping, else (by default) the namespace; the
// minimum runtime and resumability from pod annotations.
package podsource

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/keys"
)

// Name is the source's registered name.
const Name = "kubernetes"

// Defaults of the label, annotations and resource.
const (
	DefaultAccountLabel         = keys.Account
	DefaultMinRuntimeAnnotation = keys.MinRuntime
	DefaultResumableAnnotation  = keys.Resumable
	DefaultResource             = "nvidia.com/gpu"
)

// Config is the kubernetes ledger source's configuration.
type Config struct {
	kubeclient.ClientConfig `yaml:",inline"`
	// Namespaces restricts the source to these namespaces; empty reads
	// every namespace.
	Namespaces []string `yaml:"namespaces,omitempty"`
	// AccountLabel is the pod label naming the account (default
	// toposcope.io/account).
	AccountLabel string `yaml:"accountLabel"`
	// NamespaceAccounts maps namespaces to accounts, for pods without
	// the label.
	NamespaceAccounts map[string]string `yaml:"namespaceAccounts,omitempty"`
	// NamespaceFallback charges a pod with neither the label nor a
	// mapped namespace to an account named after its namespace (default
	// true); false leaves such pods out.
	NamespaceFallback bool `yaml:"namespaceFallback"`
	// MinRuntimeAnnotation is the pod annotation holding the declared
	// minimum runtime as a Go duration ("2h"); work that declares one is
	// allocated (default toposcope.io/min-runtime).
	MinRuntimeAnnotation string `yaml:"minRuntimeAnnotation"`
	// ResumableAnnotation marks work that can be re-queued ("true")
	// (default toposcope.io/resumable).
	ResumableAnnotation string `yaml:"resumableAnnotation"`
	// Resources are the extended resources counted as GPUs (default
	// nvidia.com/gpu).
	Resources []string `yaml:"resources"`
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{ClientConfig: kubeclient.DefaultClientConfig(), AccountLabel: DefaultAccountLabel, NamespaceFallback: true,
		MinRuntimeAnnotation: DefaultMinRuntimeAnnotation, ResumableAnnotation: DefaultResumableAnnotation,
		Resources: []string{DefaultResource}}
}

// Validate reports every invalid field as a config.FieldError.
func (c *Config) Validate() error {
	errs := []error{c.ClientConfig.Validate()}
	key := func(field, k string) {
		if msgs := validation.IsQualifiedName(k); len(msgs) > 0 {
			errs = append(errs, config.Errorf(field, "%q is not a label or annotation key: %s", k, strings.Join(msgs, "; ")))
		}
	}
	key("accountLabel", c.AccountLabel)
	key("minRuntimeAnnotation", c.MinRuntimeAnnotation)
	key("resumableAnnotation", c.ResumableAnnotation)
	if len(c.Resources) == 0 {
		errs = append(errs, config.Errorf("resources", "must name at least one resource"))
	}
	for i, r := range c.Resources {
		key(fmt.Sprintf("resources[%d]", i), r)
	}
	for i, ns := range c.Namespaces {
		if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
			errs = append(errs, config.Errorf(fmt.Sprintf("namespaces[%d]", i), "%q is not a namespace name: %s", ns, strings.Join(msgs, "; ")))
		}
	}
	for ns, acct := range c.NamespaceAccounts {
		if acct == "" {
			errs = append(errs, config.Errorf("namespaceAccounts."+ns, "must name an account"))
		}
	}
	return config.Join(errs...)
}
