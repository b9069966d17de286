package kubetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// startTimeout bounds starting the cluster of a test package.
const startTimeout = 3 * time.Minute

// Env starts one Cluster for a test binary, the first time a test asks for
// it, and stops it when the binary's TestMain returns from Run.
type Env struct {
	opts    Options
	setup   []func(context.Context, *Cluster) error
	once    sync.Once
	cluster *Cluster
	err     error
	binErr  error
}

// NewEnv returns an Env that has started nothing yet. Each setup function
// runs once, right after the cluster started (to install CRDs, say); an
// error fails every test that requires the cluster.
func NewEnv(setup ...func(context.Context, *Cluster) error) *Env { return &Env{setup: setup} }

// NewEnvOptions is NewEnv for a cluster started with opts.
func NewEnvOptions(opts Options, setup ...func(context.Context, *Cluster) error) *Env {
	return &Env{opts: opts, setup: setup}
}

// Run runs the tests (m.Run) and stops the cluster if one was started; it
// returns m.Run's exit code, for os.Exit.
func (e *Env) Run(m *testing.M) int {
	code := m.Run()
	e.Stop()
	return code
}

// Stop stops the cluster, if it was started.
func (e *Env) Stop() {
	if e.cluster != nil {
		e.cluster.Stop()
	}
}

// Require returns the package's running cluster, starting it on first
// use. Without etcd or kube-apiserver it skips the test, except with
// CI=true, where it fails: run hack/install-kube.sh. A cluster that does
// not start fails the test.
func (e *Env) Require(t testing.TB) *Cluster {
	t.Helper()
	e.once.Do(func() {
		b, err := FindBinaries()
		if err != nil {
			e.binErr = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
		defer cancel()
		e.cluster, e.err = StartOptions(ctx, b, e.opts)
		for _, f := range e.setup {
			if e.err == nil {
				e.err = f(ctx, e.cluster)
			}
		}
	})
	switch {
	case e.binErr != nil && InCI():
		t.Fatalf("CI=true and no Kubernetes test binaries: %v; run hack/install-kube.sh", e.binErr)
	case e.binErr != nil:
		t.Skipf("no Kubernetes test binaries (%v); run hack/install-kube.sh", e.binErr)
	case e.err != nil:
		t.Fatalf("start etcd + kube-apiserver: %v", e.err)
	}
	return e.cluster
}

// Prefix returns a short name prefix unique within the cluster ("t7"), so
// that parallel tests create cluster-scoped objects (Nodes, Topologies)
// that do not collide. Label what you create with PrefixLabel=prefix and
// select on it.
func (c *Cluster) Prefix(t testing.TB) string {
	t.Helper()
	return fmt.Sprintf("t%d", c.seq.Add(1))
}

// PrefixLabel is the label key that tests put on their objects with their
// Prefix as the value.
const PrefixLabel = "kubetest.toposcope.io/prefix"

// Selector is the label selector of the objects labelled with prefix.
func Selector(prefix string) string { return PrefixLabel + "=" + prefix }

// Namespace creates a namespace unique to the test and returns its name.
// It is not deleted (there is no namespace controller to finalize it); the
// whole cluster goes away with the test binary.
func (c *Cluster) Namespace(t testing.TB) string {
	t.Helper()
	name := c.Prefix(t) + "-" + dnsLabel(t.Name())
	if len(name) > 63 {
		name = strings.TrimRight(name[:63], "-")
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := c.core.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
	return name
}

// dnsLabel lowercases s and replaces what a DNS label cannot hold by '-'.
func dnsLabel(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return strings.Trim(b.String(), "-")
}
