package kubescheduler_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/toposcope/toposcope/app"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/placement/podsource"
	"github.com/toposcope/toposcope/providers/sim"
	"github.com/toposcope/toposcope/testenv/consumertest"
	"github.com/toposcope/toposcope/testenv/kubetest"
	"github.com/toposcope/toposcope/testenv/proctest"
)

// toposcope is `toposcope serve` run in-process by app.Serve on a
// fabric: the sim provider on the fabric's model, the kubernetes ledger
// source on the test's namespace (read every second), and the scheduler
// extender on.
type toposcope struct {
	url string
	log *proctest.Output
}

// startToposcope serves toposcope for the test and waits until it has
// discovered the fabric.
func startToposcope(t testing.TB, c *kubetest.Cluster, f *consumertest.Fabric, ns string, tune ...func(*config.File)) *toposcope {
	t.Helper()
	dir := t.TempDir()
	model, kubeconfig := filepath.Join(dir, "model.yaml"), filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(model, f.Model, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := kubetest.WriteKubeconfig(kubeconfig, c.AdminConfig()); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Provider = config.Plugin{Name: sim.Name}
	config.SetParam(&cfg.Provider.Params, "model", model)
	cfg.Store.Path = filepath.Join(dir, "store.db")
	cfg.Paths.Read = []string{dir}
	cfg.Placement.SyncInterval = time.Second
	src := config.Plugin{Name: podsource.Name}
	config.SetParam(&src.Params, "kubeconfig", kubeconfig)
	config.SetParamList(&src.Params, "namespaces", []string{ns})
	cfg.Placement.Sources = []config.Plugin{src}
	cfg.Placement.Extender.Enabled = true
	for _, f := range tune {
		f(cfg)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts := &toposcope{url: "http://" + ln.Addr().String(), log: &proctest.Output{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		log := slog.New(slog.NewTextHandler(ts.log, &slog.HandlerOptions{Level: slog.LevelInfo}))
		done <- app.Serve(ctx, cfg, app.ServeDeps{Logger: log, Stdout: io.Discard, Listener: ln, Version: "test"})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("toposcope serve: %v", err)
		}
		if t.Failed() {
			t.Logf("toposcope log:\n%s", ts.log.String())
		}
	})
	err = kubetest.Poll(t.Context(), time.Minute, "toposcope to discover the fabric", func(ctx context.Context) (bool, error) {
		resp, err := http.Get(ts.url + "/readyz")
		if err != nil {
			return false, nil
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, ts.log.String())
	}
	return ts
}

// waitLedger waits until toposcope's ledger holds n records.
func (ts *toposcope) waitLedger(t *testing.T, n int) {
	t.Helper()
	err := kubetest.Poll(t.Context(), time.Minute, fmt.Sprintf("toposcope's ledger to read %d pods", n), func(ctx context.Context) (bool, error) {
		var l struct {
			Records []placement.Record `json:"records"`
		}
		if err := ts.getJSON("/v1/ledger", &l); err != nil {
			return false, err
		}
		return len(l.Records) >= n, nil
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, ts.log.String())
	}
}

func (ts *toposcope) getJSON(path string, v any) error {
	resp, err := http.Get(ts.url + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// place asks toposcope's planner (POST /v1/placements) for its first
// candidate.
func (ts *toposcope) place(t *testing.T, req placement.Request) []string {
	t.Helper()
	body, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(ts.url+"/v1/placements", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var res placement.Result
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil || resp.StatusCode != http.StatusOK || len(res.Candidates) == 0 {
		t.Fatalf("POST /v1/placements: %d, %v", resp.StatusCode, err)
	}
	var out []string
	for _, n := range res.Candidates[0].Nodes {
		out = append(out, n.Node)
	}
	return out
}

// extenderYAML configures kube-scheduler to call toposcope at url.
func extenderYAML(url string) string {
	return fmt.Sprintf(`extenders:
- urlPrefix: %q
  filterVerb: filter
  prioritizeVerb: prioritize
  preemptVerb: preempt
  weight: 5
  nodeCacheCapable: true
  httpTimeout: 10s
  managedResources:
  - name: nvidia.com/gpu
    ignoredByScheduler: false
`, url+"/v1/extender")
}

// startExtendedScheduler runs a second kube-scheduler, named after the
// test, that calls toposcope's extender; pods choose it by name.
func startExtendedScheduler(t *testing.T, c *kubetest.Cluster, ts *toposcope) (string, *kubetest.Scheduler) {
	t.Helper()
	bin, err := kubetest.FindScheduler()
	if err != nil {
		t.Fatal(err)
	}
	name := c.Prefix(t) + "-toposcope"
	s, err := c.StartSchedulerWith(t.Context(), bin, kubetest.SchedulerOptions{Name: name, Extenders: extenderYAML(ts.url)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return name, s
}

// priorityClass creates a PriorityClass of the test and returns its name.
func priorityClass(t *testing.T, c *kubetest.Cluster, suffix string, value int32) string {
	t.Helper()
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: c.Prefix(t) + "-" + suffix}, Value: value}
	if _, err := c.Core().SchedulingV1().PriorityClasses().Create(t.Context(), pc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Core().SchedulingV1().PriorityClasses().Delete(context.Background(), pc.Name, metav1.DeleteOptions{})
	})
	return pc.Name
}

// occupant is a pod bound to a node by the test (no scheduler).
type occupant struct {
	name, node, account, minRuntime, priorityClass string
	gpus                                           int
}

func (o occupant) create(t *testing.T, c *kubetest.Cluster, ns string) {
	t.Helper()
	p := kubetest.GPUPod(ns, o.name, o.gpus, nil)
	p.Spec.NodeName = o.node
	p.Spec.PriorityClassName = o.priorityClass
	p.Labels = map[string]string{podsource.DefaultAccountLabel: o.account}
	if o.minRuntime != "" {
		p.Annotations = map[string]string{podsource.DefaultMinRuntimeAnnotation: o.minRuntime}
	}
	if _, err := c.Core().CoreV1().Pods(ns).Create(t.Context(), p, metav1.CreateOptions{}); err != nil {
		t.Fatalf("occupant %s: %v", o.name, err)
	}
}

// podNode waits until the pod is bound and returns its node.
func podNode(t *testing.T, c *kubetest.Cluster, ns, name string, logs ...func() string) string {
	t.Helper()
	node := ""
	err := kubetest.Poll(t.Context(), bindTimeout, "pod "+name+" to be bound", func(ctx context.Context) (bool, error) {
		p, err := c.Core().CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		node = p.Spec.NodeName
		return node != "", nil
	})
	if err != nil {
		msg := err.Error()
		for _, l := range logs {
			msg += "\n" + l()
		}
		t.Fatal(msg)
	}
	return node
}

// schedulerPod is a GPU pod for the named scheduler on the fabric.
func schedulerPod(ns, name, scheduler string, gpus int, f *consumertest.Fabric, account string) *corev1.Pod {
	p := kubetest.GPUPod(ns, name, gpus, f.Selector())
	p.Spec.SchedulerName = scheduler
	p.Labels = map[string]string{podsource.DefaultAccountLabel: account}
	p.Annotations = map[string]string{}
	return p
}
