package charts_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/toposcope/toposcope/agent"
	"github.com/toposcope/toposcope/app"
	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/testenv/helmtest"
	"github.com/toposcope/toposcope/testenv/kubetest"
	"github.com/toposcope/toposcope/topology"
)

var kube = kubetest.NewEnv(func(ctx context.Context, c *kubetest.Cluster) error {
	crds := []string{"../engines/schedtopo/testdata/crds/kueue-topologies.yaml", "../engines/schedtopo/testdata/crds/kai-topologies.yaml"}
	for _, u := range upstreamCRDs {
		dir, err := moduleDir(ctx, u.module)
		if err != nil {
			return err
		}
		crds = append(crds, filepath.Join(dir, u.file))
	}
	return c.InstallCRDs(ctx, crds...)
})

// upstreamCRDs are the CRDs of the chart's optional objects, as their
// projects publish them in their Go modules.
var upstreamCRDs = []struct{ module, file string }{
	{"github.com/prometheus-operator/prometheus-operator@v0.93.0", "example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml"},
	{"sigs.k8s.io/gateway-api@v1.6.3", "config/crd/standard/gateway.networking.k8s.io_httproutes.yaml"},
}

// moduleDir downloads a module version into the module cache (go mod
// download) and returns its folder.
func moduleDir(ctx context.Context, mod string) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "mod", "download", "-json", mod).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = fmt.Errorf("%w: %s%s", err, ee.Stderr, out)
		}
		return "", fmt.Errorf("go mod download %s: %w", mod, err)
	}
	var m struct{ Dir string }
	if err := json.Unmarshal(out, &m); err != nil {
		return "", fmt.Errorf("go mod download %s: %w", mod, err)
	}
	if m.Dir == "" {
		return "", fmt.Errorf("go mod download %s: no folder in %q", mod, out)
	}
	return m.Dir, nil
}

func TestMain(m *testing.M) { os.Exit(kube.Run(m)) }

// installValues enables every part of the chart (the ServiceMonitor and
// HTTPRoute through their projects' CRDs).
const installValues = `replicaCount: 2
config:
  provider: {name: sim, params: {model: small-tree}}
  engines:
    - name: k8s-labels
    - name: kueue
      params: {name: %[1]s-kueue}
    - name: kai
      params: {name: %[1]s-kai}
    - name: slinky
      params:
        namespace: %[2]s
        slurm: {plugin: topology/tree, slurmVersion: "25.11"}
  kubernetes: {watchNodes: true}
  placement:
    sources: [{name: kubernetes}]
auth: {existingSecret: api-tokens, key: tokens, peerTokenKey: peer}
agent: {enabled: true}
networkPolicy:
  enabled: true
  metricsNamespace: monitoring
  egress: {enabled: true, apiServerCIDRs: [10.0.0.1/32]}
podDisruptionBudget: {enabled: true}
ingress: {enabled: true, hosts: [toposcope.example.com]}
httpRoute: {enabled: true, parentRefs: [{name: gateway}], hostnames: [toposcope.example.com]}
metrics:
  serviceMonitor: {enabled: true, namespace: %[3]s, bearerTokenSecret: {name: api-tokens, key: peer}}
`

// upgradeValues drops the kai engine, the agent and the second replica,
// and keeps the store on a claim.
const upgradeValues = `config:
  provider: {name: sim, params: {model: small-tree}}
  engines:
    - name: k8s-labels
    - name: kueue
      params: {name: %[1]s-kueue}
persistence: {enabled: true}
`

// TestInstallUpgradeUninstall installs the chart with the real helm into
// the real apiserver, then runs the rendered configuration's plugins with
// the chart's own ServiceAccount tokens: each engine publishes, a verb
// outside the chart's rules is refused, and the agent may annotate its
// own Node only. An upgrade removes what the new values drop; an uninstall
// leaves only the documented claim.
//
// Not parallel: it and TestGettingStarted own the cluster's Nodes while
// they run.
func TestInstallUpgradeUninstall(t *testing.T) {
	c := kube.Require(t)
	h := helmtest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ns, slurmNS, monNS := c.Namespace(t), c.Namespace(t), c.Namespace(t)
	prefix := c.Prefix(t)
	dir := t.TempDir()
	kc := filepath.Join(dir, "admin.kubeconfig")
	if err := kubetest.WriteKubeconfig(kc, c.AdminConfig()); err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "api-tokens"}, StringData: map[string]string{"tokens": "write:w-token\nread:r-token\n", "peer": "r-token"}}
	if _, err := c.Core().CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	values := filepath.Join(dir, "values.yaml")
	if err := os.WriteFile(values, fmt.Appendf(nil, installValues, prefix, slurmNS, monNS), 0o600); err != nil {
		t.Fatal(err)
	}
	helm := func(args ...string) string {
		t.Helper()
		out, err := h.Run(ctx, append(args, "--namespace", ns, "--kubeconfig", kc)...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	const rel = "topo"
	helm("install", rel, chartDir, "-f", values)
	manifest := helm("get", "manifest", rel)
	if missing, err := c.Missing(ctx, []byte(manifest), ns); err != nil || len(missing) > 0 {
		t.Fatalf("objects of the release not in the apiserver: %v %v", missing, err)
	}

	cfg, err := config.Parse([]byte(renderedConfig(t, manifest)))
	if err != nil {
		t.Fatalf("the installed configuration: %v", err)
	}
	g := discoverNodes(ctx, t, c, cfg.Provider)
	createSlurmdPods(ctx, t, c, slurmNS, g)
	user := "system:serviceaccount:" + ns + ":" + rel + "-toposcope"
	for _, r := range []rbacv1.PolicyRule{
		{Verbs: []string{"patch"}, APIGroups: []string{""}, Resources: []string{"nodes"}},
		{Verbs: []string{"create"}, APIGroups: []string{"kai.scheduler"}, Resources: []string{"topologies"}},
		{Verbs: []string{"watch"}, APIGroups: []string{""}, Resources: []string{"nodes"}},
	} {
		if err := c.WaitAllowed(ctx, user, "", r); err != nil {
			t.Fatal(err)
		}
	}
	serveRC, serveKC := serviceAccountKubeconfig(ctx, t, c, ns, rel+"-toposcope", dir)
	publishAs(ctx, t, cfg, serveKC, g)
	reg := app.Registry()
	for i := range cfg.Placement.Sources {
		s := &cfg.Placement.Sources[i]
		config.SetParam(&s.Params, "kubeconfig", serveKC)
		src, err := reg.NewLedgerSource(s.Name, "source", &s.Params, placement.SourceDeps{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := src.Records(ctx, time.Now()); err != nil {
			t.Errorf("ledger source %s as the chart's ServiceAccount: %v", s.Name, err)
		}
	}
	serve, err := kubernetes.NewForConfig(serveRC)
	if err != nil {
		t.Fatal(err)
	}
	refused(t, "delete a Node", serve.CoreV1().Nodes().Delete(ctx, g.Nodes()[0].Name, metav1.DeleteOptions{}))
	_, err = serve.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
	refused(t, "list Secrets", err)
	_, err = serve.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
	refused(t, "create a ConfigMap outside the Slinky namespace", err)

	ds := mustKind(t, decode(t, manifest), "DaemonSet", "agent")
	checkAgent(ctx, t, c, ns, rel+"-toposcope-agent", podSpec(ds)["priorityClassName"].(string), g)

	// Upgrade: kai, the agent and its policy, the second replica, the
	// Lease role, the slinky and ledger roles, the NetworkPolicy, PDB and
	// Ingress go; a claim comes.
	if err := os.WriteFile(values, fmt.Appendf(nil, upgradeValues, prefix), 0o600); err != nil {
		t.Fatal(err)
	}
	helm("upgrade", rel, chartDir, "-f", values)
	upgraded := helm("get", "manifest", rel)
	if missing, err := c.Missing(ctx, []byte(upgraded), ns); err != nil || len(missing) > 0 {
		t.Fatalf("objects of the upgraded release not in the apiserver: %v %v", missing, err)
	}
	gone := droppedObjects(t, manifest, upgraded)
	for _, want := range []string{"ClusterRole " + rel + "-toposcope-kai", "DaemonSet " + rel + "-toposcope-agent",
		"ValidatingAdmissionPolicy " + rel + "-toposcope-agent", "PodDisruptionBudget " + rel + "-toposcope",
		"ServiceMonitor " + rel + "-toposcope", "HTTPRoute " + rel + "-toposcope"} {
		if !strings.Contains(strings.Join(gone, "\n"), want) {
			t.Errorf("the upgrade should drop %s; dropped: %v", want, gone)
		}
	}
	for _, k := range present(ctx, t, c, manifest, ns) {
		if slices.Contains(gone, k) {
			t.Errorf("the upgrade dropped %s from the release but it is still in the apiserver", k)
		}
	}

	helm("uninstall", rel)
	if left := present(ctx, t, c, upgraded, ns); len(left) != 1 || left[0] != "PersistentVolumeClaim "+rel+"-toposcope" {
		t.Errorf("after uninstall, want only the store's claim left (helm.sh/resource-policy: keep), got %v", left)
	}
}

// present lists "Kind name" of the objects of manifest that the
// apiserver holds.
func present(ctx context.Context, t *testing.T, c *kubetest.Cluster, manifest, ns string) []string {
	t.Helper()
	missing, err := c.Missing(ctx, []byte(manifest), ns)
	if err != nil {
		t.Fatal(err)
	}
	gone := map[string]bool{}
	for _, m := range missing { // "Kind namespace/name"
		kind, ref, _ := strings.Cut(m, " ")
		gone[kind+" "+ref[strings.LastIndex(ref, "/")+1:]] = true
	}
	var held []string
	for _, o := range decode(t, manifest) {
		if k := o.GetKind() + " " + o.GetName(); !gone[k] {
			held = append(held, k)
		}
	}
	return held
}

// decode splits a manifest into its objects.
func decode(t *testing.T, manifest string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := kubetest.DecodeYAML([]byte(manifest))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// refused fails unless err is the apiserver's Forbidden.
func refused(t *testing.T, what string, err error) {
	t.Helper()
	if !apierrors.IsForbidden(err) {
		t.Errorf("%s as the chart's ServiceAccount: want Forbidden, got %v", what, err)
	}
}

// serviceAccountKubeconfig requests a token of the ServiceAccount and
// writes a kubeconfig that uses it only, in dir; it returns both.
func serviceAccountKubeconfig(ctx context.Context, t *testing.T, c *kubetest.Cluster, ns, name, dir string) (*rest.Config, string) {
	t.Helper()
	rc, err := c.ServiceAccountToken(ctx, ns, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+".kubeconfig")
	if err := kubetest.WriteKubeconfig(path, rc); err != nil {
		t.Fatal(err)
	}
	return rc, path
}

// publishAs runs every engine of cfg with the kubeconfig of the chart's
// ServiceAccount, as the pod's in-cluster configuration would.
func publishAs(ctx context.Context, t *testing.T, cfg *config.File, kubeconfig string, g *topology.Graph) {
	t.Helper()
	for i := range cfg.Engines {
		e := &cfg.Engines[i]
		config.SetParam(&e.Params, "kubeconfig", kubeconfig)
		eng, err := app.Registry().NewEngine(e.Name, fmt.Sprintf("engines[%d]", i), &e.Params, engines.Deps{})
		if err != nil {
			t.Fatal(err)
		}
		if err := eng.Publish(ctx, g); err != nil {
			t.Errorf("engine %s as the chart's ServiceAccount: %v", e.Name, err)
		}
	}
}

// createSlurmdPods creates a slurmd pod, as slurm-operator labels it,
// on each node of g in namespace ns (with the ServiceAccount the
// apiserver admits pods with): the slinky engine names the nodes of its
// file after them.
func createSlurmdPods(ctx context.Context, t *testing.T, c *kubetest.Cluster, ns string, g *topology.Graph) {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}}
	if _, err := c.Core().CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	for i, n := range g.Nodes() {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("slurm-worker-slinky-%d", i), Labels: map[string]string{"app.kubernetes.io/component": "worker"}},
			Spec: corev1.PodSpec{NodeName: n.Name, Hostname: fmt.Sprintf("slinky-%d", i), Containers: []corev1.Container{{Name: "slurmd", Image: "slurmd"}}}}
		if _, err := c.Core().CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// discoverNodes runs a provider and creates a Node for each node of its
// graph, deleted when the test ends.
func discoverNodes(ctx context.Context, t *testing.T, c *kubetest.Cluster, provider config.Plugin) *topology.Graph {
	t.Helper()
	p, err := app.Registry().NewProvider(provider.Name, "provider", &provider.Params, providers.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := p.Discover(ctx, providers.Request{})
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(g.Nodes()))
	for _, n := range g.Nodes() {
		names = append(names, n.Name)
	}
	if err := c.CreateNodes(ctx, kubetest.NodeObjects(names, nil), 4); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, n := range names {
			if err := c.Core().CoreV1().Nodes().Delete(context.Background(), n, metav1.DeleteOptions{}); err != nil {
				t.Errorf("delete node %s: %v", n, err)
			}
		}
	})
	return g
}

// checkAgent: a Pod of the agent's priority class is admitted in the
// release's namespace with that class's priority; with a token bound to
// it on node A (as the kubelet mounts it), the agent's ServiceAccount
// annotates node A, and the admission policy refuses node B and a label
// change on A.
func checkAgent(ctx context.Context, t *testing.T, c *kubetest.Cluster, ns, sa, priorityClass string, g *topology.Graph) {
	t.Helper()
	nodeA, nodeB := g.Nodes()[0].Name, g.Nodes()[1].Name
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "agent-a"}, Spec: corev1.PodSpec{
		ServiceAccountName: sa, NodeName: nodeA, PriorityClassName: priorityClass,
		Containers: []corev1.Container{{Name: "agent", Image: "toposcope"}},
	}}
	pod, err := c.Core().CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("an agent Pod of priority class %q: %v", priorityClass, err)
	}
	pc, err := c.Core().SchedulingV1().PriorityClasses().Get(ctx, priorityClass, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pod.Spec.Priority == nil || *pod.Spec.Priority != pc.Value || priorityClass != "system-node-critical" {
		t.Errorf("agent Pod of class %q: priority %v, want system-node-critical's %d", priorityClass, pod.Spec.Priority, pc.Value)
	}
	if err := c.WaitAllowed(ctx, "system:serviceaccount:"+ns+":"+sa, "", rbacv1.PolicyRule{Verbs: []string{"patch"}, APIGroups: []string{""}, Resources: []string{"nodes"}}); err != nil {
		t.Fatal(err)
	}
	rc, err := c.ServiceAccountToken(ctx, ns, sa, &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID})
	if err != nil {
		t.Fatal(err)
	}
	core, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	agentClients, err := kubeclient.NewClients(rc) // what the agent itself uses
	if err != nil {
		t.Fatal(err)
	}
	facts := providers.NodeFacts{Node: nodeA, InstanceID: "i-0a", Region: "us-east-1"}
	// The policy takes a moment to be enforced after it was created.
	var wrote bool
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := agent.Annotate(ctx, agentClients.Core.Nodes(), providers.NodeFacts{Node: nodeB, InstanceID: "i-0b"})
		if apierrors.IsForbidden(err) || apierrors.IsInvalid(err) {
			if !strings.Contains(err.Error(), "only the Node its pod runs on") {
				t.Errorf("node B refused with an unclear message: %v", err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent annotated another node (%s): %v", nodeB, err)
		}
		// Undo and retry until the policy is in force.
		_, _ = c.Core().CoreV1().Nodes().Patch(ctx, nodeB, types.MergePatchType, []byte(`{"metadata":{"annotations":{"toposcope.io/instance-id":null}}}`), metav1.PatchOptions{})
		time.Sleep(500 * time.Millisecond)
	}
	if wrote, err = agent.Annotate(ctx, agentClients.Core.Nodes(), facts); err != nil || !wrote {
		t.Fatalf("the agent annotates its own node %s: wrote=%v %v", nodeA, wrote, err)
	}
	_, err = core.CoreV1().Nodes().Patch(ctx, nodeA, types.MergePatchType, []byte(`{"metadata":{"labels":{"toposcope.io/x":"y"}}}`), metav1.PatchOptions{})
	if err == nil || !strings.Contains(err.Error(), "may not change Node labels") {
		t.Errorf("a label change on its own node: want the policy's refusal, got %v", err)
	}
	_, err = core.CoreV1().Nodes().Patch(ctx, nodeA, types.MergePatchType, []byte(`{"metadata":{"annotations":{"other.io/x":"y"}}}`), metav1.PatchOptions{})
	if err == nil || !strings.Contains(err.Error(), "only toposcope.io/ annotations") {
		t.Errorf("a foreign annotation on its own node: want the policy's refusal, got %v", err)
	}
	refused(t, "the agent deleting its node", core.CoreV1().Nodes().Delete(ctx, nodeA, metav1.DeleteOptions{}))
}

// droppedObjects lists "Kind name" of the objects of before that after
// does not hold.
func droppedObjects(t *testing.T, before, after string) []string {
	t.Helper()
	keep := map[string]bool{}
	for _, o := range decode(t, after) {
		keep[o.GetKind()+" "+o.GetName()] = true
	}
	var gone []string
	for _, o := range decode(t, before) {
		if k := o.GetKind() + " " + o.GetName(); !keep[k] {
			gone = append(gone, k)
		}
	}
	return gone
}
