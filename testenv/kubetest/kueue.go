package kubetest

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// KueueVersion is the Kueue release hack/install-kueue.sh builds.
const KueueVersion = "v0.17.0"

// EnvKueue is the path of a kueue binary; its CRDs and webhook manifest
// are read from the folder <path>-config (as the install script lays
// them out).
const EnvKueue = "TOPOSCOPE_KUEUE"

// KueueNamespace is the namespace Kueue runs in (its events and
// configuration name it).
const KueueNamespace = "kueue-system"

// kueueMetricsCertDir is where cmd/kueue reads its metrics certificate
// when internal certificate management is off: a fixed path, which no
// flag or configuration field moves.
const kueueMetricsCertDir = "/etc/kueue/metrics/certs"

// KueueBinaries are the kueue binary and the folder with its crd/ and
// webhook/ manifests.
type KueueBinaries struct {
	Bin, ConfigDir string
}

// FindKueue locates kueue ($TOPOSCOPE_KUEUE, else the cache's
// bin/kueue-v0.17.0) and its config folder beside it.
func FindKueue() (KueueBinaries, error) {
	bin := os.Getenv(EnvKueue)
	if bin == "" {
		bin = filepath.Join(CacheDir(), "bin", "kueue-"+KueueVersion)
	}
	b := KueueBinaries{Bin: bin, ConfigDir: bin + "-config"}
	if p := firstExecutable([]string{bin}, ""); p == "" {
		return KueueBinaries{}, fmt.Errorf("%w: kueue %s: not at %s ($%s); run hack/install-kueue.sh", ErrNoBinaries, KueueVersion, bin, EnvKueue)
	}
	if _, err := os.Stat(filepath.Join(b.ConfigDir, "webhook", "manifests.yaml")); err != nil {
		return KueueBinaries{}, fmt.Errorf("%w: kueue CRDs and webhooks: %w; run hack/install-kueue.sh", ErrNoBinaries, err)
	}
	return b, nil
}

// Kueue is a running Kueue controller manager.
type Kueue struct {
	// Webhooks are the Kueue webhooks registered with the apiserver (by
	// URL); Skipped are those of the manifest left out: the job
	// integrations' (pods, Jobs, JobSets, ...), which these tests do not
	// use.
	Webhooks, Skipped []string
	proc              *process
}

// Log returns the tail of Kueue's log, for a failure message.
func (k *Kueue) Log() string { return k.proc.tail() }

// kueueConfig is a config.kueue.x-k8s.io/v1beta2 Configuration for a run
// out of cluster: its own certificates, no leader election, no metrics
// server. Fair sharing is on (a fairSharing section turns it on), as the
// kueue-budgets engine's Cohort tree and weights need; a ClusterQueue in
// no Cohort, as the topology tests use, is not affected by it.
const kueueConfig = `apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: ` + KueueNamespace + `
health:
  healthProbeBindAddress: 127.0.0.1:%d
metrics:
  bindAddress: "0"
webhook:
  host: 127.0.0.1
  port: %d
  certDir: %q
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
integrations:
  frameworks: ["batch/job"]
fairSharing:
  preemptionStrategies: [LessThanOrEqualToFinalShare, LessThanInitialShare]
`

// kueueWrapper runs kueue in a private mount namespace whose /etc is an
// overlay, so that the metrics certificate can sit at Kueue's fixed path
// without touching the host's /etc. $1 is the overlay folder, $2 the
// certificate folder; the rest is the command.
const kueueWrapper = `set -e
mkdir -p "$1/upper" "$1/work"
mount -t overlay overlay -o "lowerdir=/etc,upperdir=$1/upper,workdir=$1/work" /etc
mkdir -p ` + kueueMetricsCertDir + `
cp "$2/tls.crt" "$2/tls.key" ` + kueueMetricsCertDir + `/
shift 2
exec "$@"
`

// StartKueue installs Kueue's CRDs, runs the kueue binary out of cluster
// against c (stopped, by its PID, with the cluster), waits until it is
// ready and registers its own webhooks by URL with a caBundle.
//
// Two things differ from an in-cluster install: the certificates are a
// self-signed pair made here (internal certificate management needs a
// kubelet to mount its Secret), and, because cmd/kueue reads its metrics
// certificate from the fixed path /etc/kueue/metrics/certs, kueue runs in
// a private mount namespace with an overlay on /etc that holds it (root,
// or an unprivileged user namespace, is needed for that mount).
func (c *Cluster) StartKueue(ctx context.Context, b KueueBinaries) (*Kueue, error) {
	crds, err := filepath.Glob(filepath.Join(b.ConfigDir, "crd", "*.yaml"))
	if err != nil {
		return nil, fmt.Errorf("kubetest: Kueue CRDs: %w", err)
	}
	if len(crds) == 0 {
		return nil, fmt.Errorf("kubetest: no Kueue CRDs in %s/crd", b.ConfigDir)
	}
	if err := c.InstallCRDs(ctx, crds...); err != nil {
		return nil, err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: KueueNamespace}}
	if _, err := c.core.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("kubetest: namespace %s: %w", KueueNamespace, err)
	}
	dir := filepath.Join(c.dir, "kueue")
	certDir := filepath.Join(dir, "certs")
	ca, err := servingCert(certDir)
	if err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := WriteKubeconfig(kubeconfig, c.AdminConfig()); err != nil {
		return nil, err
	}
	ports, err := FreePorts(2)
	if err != nil {
		return nil, err
	}
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, kueueConfig, ports[0], ports[1], certDir), 0o600); err != nil {
		return nil, fmt.Errorf("kubetest: %w", err)
	}
	args := []string{"-c", kueueWrapper, "kueue", filepath.Join(dir, "etc"), certDir,
		b.Bin, "--config=" + cfg, "--feature-gates=VisibilityOnDemand=false"}
	p, err := startProcessEdit(dir, "kueue", "/bin/sh", args, func(cmd *exec.Cmd) {
		cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
		privateMounts(cmd.SysProcAttr)
	})
	if err != nil {
		return nil, err
	}
	c.extra.add(p)
	k := &Kueue{proc: p}
	if err := waitHTTP(ctx, p, "http://127.0.0.1:"+strconv.Itoa(ports[0])+"/readyz"); err != nil {
		return nil, err
	}
	if err := c.registerKueueWebhooks(ctx, k, b, ca, ports[1]); err != nil {
		return nil, err
	}
	return k, nil
}

// privateMounts gives the child its own mount namespace: as root
// directly, otherwise inside a user namespace where it is root.
func privateMounts(a *syscall.SysProcAttr) {
	if os.Geteuid() == 0 {
		a.Unshareflags |= syscall.CLONE_NEWNS
		return
	}
	a.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS
	a.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}}
	a.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}}
	a.GidMappingsEnableSetgroups = false
}

// waitHTTP polls url until it answers 200, the process exits, or
// readyTimeout passes.
func waitHTTP(ctx context.Context, p *process, url string) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	var last error
	for {
		if exited, err := p.exited(); exited {
			return fmt.Errorf("kubetest: %s exited: %w\n%s", p.name, err, p.tail())
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return fmt.Errorf("kubetest: %w", err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("%s: %s", url, resp.Status)
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("kubetest: %s not ready after %v: %w\n%s", p.name, readyTimeout, last, p.tail())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// registerKueueWebhooks creates Kueue's own webhook configurations from
// its manifest, each webhook pointed at https://127.0.0.1:port<path> with
// the CA, keeping the webhooks of the kueue.x-k8s.io objects (defaulting
// and validation of Workloads, ClusterQueues, ResourceFlavors, ...).
func (c *Cluster) registerKueueWebhooks(ctx context.Context, k *Kueue, b KueueBinaries, ca []byte, port int) error {
	data, err := os.ReadFile(filepath.Join(b.ConfigDir, "webhook", "manifests.yaml"))
	if err != nil {
		return fmt.Errorf("kubetest: %w", err)
	}
	docs, err := DecodeYAML(data)
	if err != nil {
		return err
	}
	bundle := base64.StdEncoding.EncodeToString(ca)
	for _, doc := range docs {
		hooks, _, _ := unstructured.NestedSlice(doc.Object, "webhooks")
		var kept []any
		for _, h := range hooks {
			m, _ := h.(map[string]any)
			name, _ := m["name"].(string)
			path, _, _ := unstructured.NestedString(m, "clientConfig", "service", "path")
			if !strings.Contains(path, "-kueue-x-k8s-io-") {
				k.Skipped = append(k.Skipped, name)
				continue
			}
			m["clientConfig"] = map[string]any{"url": "https://127.0.0.1:" + strconv.Itoa(port) + path, "caBundle": bundle}
			kept = append(kept, m)
			k.Webhooks = append(k.Webhooks, name)
		}
		if err := unstructured.SetNestedSlice(doc.Object, kept, "webhooks"); err != nil {
			return fmt.Errorf("kubetest: %w", err)
		}
		doc.SetName("kueue-" + doc.GetName())
		gvr := schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: strings.ToLower(doc.GetKind()) + "s"}
		if _, err := c.dyn.Resource(gvr).Create(ctx, doc, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("kubetest: register %s %s: %w", doc.GetKind(), doc.GetName(), err)
		}
	}
	return nil
}
