package service_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/toposcope/toposcope/testenv/budget"
	"github.com/toposcope/toposcope/testenv/dbtest"
	"github.com/toposcope/toposcope/testenv/kubetest"
	"github.com/toposcope/toposcope/testenv/proctest"
	"github.com/toposcope/toposcope/testenv/releasebin"
)

// deadline bounds every wait of the failover test; the test polls.
const deadline = 2 * time.Minute

// replica is a running `toposcope serve` process.
type replica struct {
	cmd            *exec.Cmd
	base           string
	stdout, stderr *proctest.Output
	exited         chan error
}

var listeningOn = regexp.MustCompile(`listening on (https?://\S+)`)

func startReplica(t *testing.T, bin, cfgPath string) *replica {
	t.Helper()
	r := &replica{stdout: &proctest.Output{}, stderr: &proctest.Output{}, exited: make(chan error, 1)}
	r.cmd = exec.Command(bin, "serve", "--config", cfgPath, "--log-level", "debug", "--allow-root")
	r.cmd.Stderr = r.stderr
	out, err := r.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			_, _ = fmt.Fprintln(r.stdout, sc.Text())
			if m := listeningOn.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	go func() { r.exited <- r.cmd.Wait() }()
	t.Cleanup(func() { _ = r.cmd.Process.Kill() })
	select {
	case r.base = <-addr:
	case err := <-r.exited:
		t.Fatalf("toposcope serve exited: %v\n%s", err, r.stderr)
	case <-time.After(deadline):
		t.Fatalf("toposcope serve printed no address\n%s", r.stderr)
	}
	return r
}

func (r *replica) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(r.base + path)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// waitUntil polls cond until it holds or the deadline passes.
func waitUntil(t *testing.T, what string, cond func() bool, logs ...*replica) {
	t.Helper()
	end := time.Now().Add(deadline)
	for !cond() {
		if time.Now().After(end) {
			var tails strings.Builder
			for _, r := range logs {
				s := r.stderr.String()
				tails.WriteString("\n--- " + r.base + " ---\n" + s[max(0, len(s)-4000):])
			}
			t.Fatalf("timed out waiting until %s%s", what, tails.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func holder(ctx context.Context, core kubernetes.Interface, ns, name string) string {
	l, err := core.CoordinationV1().Leases(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

func tier0(ctx context.Context, core kubernetes.Interface, name string) string {
	n, err := core.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	return n.Labels["topology.toposcope.io/tier-0"]
}

func writeTestKubeconfig(t *testing.T, dir string, c *kubetest.Cluster) string {
	t.Helper()
	path := filepath.Join(dir, "kubeconfig")
	if err := kubetest.WriteKubeconfig(path, c.AdminConfig()); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestServeFailover runs two real `toposcope serve` processes with the node
// watcher and leader election against one apiserver: the leader labels the
// nodes, a node added later is labelled through the watcher, the follower
// answers /v1/graph with the leader's topology, and after a SIGKILL of the
// leader the follower takes the Lease and publishes.
func TestServeFailover(t *testing.T) {
	t.Parallel()
	if testing.Short() && !kubetest.InCI() { // never skipped in CI
		t.Skip("builds and runs the binary")
	}
	for _, name := range []string{"bbolt", string(dbtest.Postgres), string(dbtest.MariaDB)} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			failover(t, dbtest.Kind(name))
		})
	}
}

// failover is TestServeFailover with each replica's own bbolt store, or
// with both on one database of kind db (the followers then read the
// leader's topology there, and the new leader goes on with the same
// snapshot history).
func failover(t *testing.T, db dbtest.Kind) {
	shared := db != "bbolt"
	c := env.Require(t)
	p := c.Prefix(t)
	ns := c.Namespace(t)
	ctx := context.Background()
	core := c.Core()
	dir := t.TempDir()
	bin := releasebin.Get(budget.Context(t, 15*time.Minute), t).Server
	model := filepath.Join(dir, "model.yaml")
	if err := os.WriteFile(model, fmt.Appendf(nil, `name: failover
switches:
  - id: spine1
    children:
      - id: leaf1
        nodes: %[1]s-gpu[1-2]
      - id: leaf2
        nodes: %[1]s-gpu[3-4]
nodes:
  - names: %[1]s-gpu[1-4]
`, p), 0o600); err != nil {
		t.Fatal(err)
	}
	kubeconfig := writeTestKubeconfig(t, dir, c)
	storeYAML := func(name string) string { return "path: " + filepath.Join(dir, name+".db") }
	if shared {
		db := dbtest.Start(t.Context(), t, dbtest.Postgres)
		dsn := filepath.Join(dir, "dsn")
		if err := os.WriteFile(dsn, []byte(db.DSN()), 0o600); err != nil {
			t.Fatal(err)
		}
		storeYAML = func(string) string {
			return "database: {driver: postgres, dsnFile: " + dsn + ", refreshInterval: 200ms}"
		}
	}
	config := func(name string) string {
		path := filepath.Join(dir, name+".yaml")
		data := fmt.Appendf(nil, `provider:
  name: sim
  params: {model: %s}
engines:
  - name: k8s-labels
    params: {kubeconfig: %s, nodeSelector: "%s"}
server:
  listen: 127.0.0.1:0
discovery:
  interval: 0s
store:
  %s
kubernetes:
  kubeconfig: %s
  watchNodes: true
  nodeSelector: "%s"
  debounce: 200ms
  leaderElection:
    enabled: true
    namespace: %s
    name: %s-toposcope
    leaseDuration: 4s
    renewDeadline: 3s
    retryPeriod: 500ms
    followInterval: 200ms
`, model, kubeconfig, kubetest.Selector(p), storeYAML(name), kubeconfig, kubetest.Selector(p), ns, p)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	addNode := func(name string) {
		t.Helper()
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{kubetest.PrefixLabel: p}}}
		if _, err := core.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	lease := p + "-toposcope"
	addNode(p + "-gpu1")

	a := startReplica(t, bin, config("a"))
	waitUntil(t, "replica a leads", func() bool { return holder(ctx, core, ns, lease) == a.base }, a)
	waitUntil(t, "the leader labels "+p+"-gpu1", func() bool { return tier0(ctx, core, p+"-gpu1") == "leaf1" }, a)
	b := startReplica(t, bin, config("b"))

	// The watcher: a node that joins gets its labels with no other trigger.
	addNode(p + "-gpu3")
	waitUntil(t, "the watcher-triggered publish labels "+p+"-gpu3", func() bool { return tier0(ctx, core, p+"-gpu3") == "leaf2" }, a)

	// The follower answers with the leader's topology.
	_, want := a.get(t, "/v1/graph")
	waitUntil(t, "the follower serves the leader's graph", func() bool {
		code, got := b.get(t, "/v1/graph")
		return code == http.StatusOK && got == want
	}, a, b)
	if holder(ctx, core, ns, lease) != a.base {
		t.Fatalf("the follower took the Lease from a live leader\n%s", b.stderr)
	}
	if strings.Contains(b.stdout.String(), "k8s-labels:") {
		t.Fatalf("the follower published:\n%s", b.stdout)
	}

	// Kill the leader: the follower takes over and publishes.
	if err := a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-a.exited
	waitUntil(t, "replica b leads", func() bool { return holder(ctx, core, ns, lease) == b.base }, b)
	waitUntil(t, "the new leader publishes", func() bool { return strings.Contains(b.stdout.String(), "k8s-labels: ") }, b)
	addNode(p + "-gpu4")
	waitUntil(t, "the new leader labels "+p+"-gpu4", func() bool { return tier0(ctx, core, p+"-gpu4") == "leaf2" }, b)
	if code, got := b.get(t, "/v1/graph"); code != http.StatusOK || got != want {
		t.Errorf("the new leader's graph = %d, differs from the old leader's", code)
	}
	if shared {
		// One history: the old leader's snapshots are the new leader's.
		_, snaps := b.get(t, "/v1/snapshots")
		if !strings.Contains(snaps, `"id":1,`) || strings.Contains(snaps, `"acceptedBy":"leader"`) {
			t.Errorf("the new leader's snapshots on the shared store: %s, want the old leader's first one and no adopted copy", snaps)
		}
	}
}
