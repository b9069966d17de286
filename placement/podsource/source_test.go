package podsource_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/placement/podsource"
	"github.com/toposcope/toposcope/testenv/kubetest"
)

// env is the package's apiserver, owned by TestMain.
var env = kubetest.NewEnv()

func TestMain(m *testing.M) { os.Exit(env.Run(m)) }

// t0 is the tests' "now"; pod times are set relative to it (the
// apiserver stores them as given, to the second).
var t0 = time.Now().UTC().Truncate(time.Second)

type podSpec struct {
	name, node       string
	labels, annots   map[string]string
	gpus, initGPUs   []int64 // per container, per init container
	phase            corev1.PodPhase
	scheduled, ended time.Time
}

// createPod creates the pod and, for a phase, writes its status (there
// is no kubelet: the test plays it).
func createPod(t *testing.T, core kubernetes.Interface, ns string, s podSpec) {
	t.Helper()
	ctx := context.Background()
	container := func(name string, gpus int64) corev1.Container {
		c := corev1.Container{Name: name, Image: "busybox"}
		if gpus > 0 {
			c.Resources.Limits = corev1.ResourceList{podsource.DefaultResource: *resource.NewQuantity(gpus, resource.DecimalSI)}
		}
		return c
	}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: ns, Labels: s.labels, Annotations: s.annots},
		Spec: corev1.PodSpec{NodeName: s.node}}
	for i, g := range s.gpus {
		p.Spec.Containers = append(p.Spec.Containers, container("c"+string(rune('a'+i)), g))
	}
	for i, g := range s.initGPUs {
		p.Spec.InitContainers = append(p.Spec.InitContainers, container("init"+string(rune('a'+i)), g))
	}
	got, err := core.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create pod %s: %v", s.name, err)
	}
	if s.phase == "" {
		return
	}
	got.Status.Phase = s.phase
	got.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue,
		LastTransitionTime: metav1.NewTime(s.scheduled)}}
	if !s.ended.IsZero() {
		for _, c := range got.Spec.Containers {
			got.Status.ContainerStatuses = append(got.Status.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image,
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(s.ended), StartedAt: metav1.NewTime(s.scheduled)}}})
		}
	}
	if _, err := core.CoreV1().Pods(ns).UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update status of pod %s: %v", s.name, err)
	}
}

// namespace creates a test namespace with its default ServiceAccount
// (which pod admission needs; there is no controller to make it).
func namespace(t *testing.T, c *kubetest.Cluster) string {
	t.Helper()
	ns := c.Namespace(t)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}}
	if _, err := c.Core().CoreV1().ServiceAccounts(ns).Create(context.Background(), sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return ns
}

// TestRecordsFromAPIServer reads pods through a ServiceAccount bound to
// exactly charts/toposcope/rbac/ledger-kubernetes.yaml, two per page, and checks
// each record; then syncs into a store through a bad annotation and a
// deleted pod.
func TestRecordsFromAPIServer(t *testing.T) {
	t.Parallel()
	c := env.Require(t)
	core := c.Core()
	ns, mapped := namespace(t, c), namespace(t, c)
	other := namespace(t, c) // not configured: never read
	sched := t0.Add(-90 * time.Minute)
	for _, p := range []struct {
		ns string
		podSpec
	}{
		{ns, podSpec{name: "train", node: "gpu001", gpus: []int64{4, 4}, labels: map[string]string{podsource.DefaultAccountLabel: "proj-a"},
			annots: map[string]string{podsource.DefaultMinRuntimeAnnotation: "2h", podsource.DefaultResumableAnnotation: "true"},
			phase:  corev1.PodRunning, scheduled: sched}},
		{ns, podSpec{name: "fallback", node: "gpu002", gpus: []int64{1}, phase: corev1.PodRunning, scheduled: sched}},
		{ns, podSpec{name: "cpu-only", node: "gpu002", gpus: []int64{0}, phase: corev1.PodRunning, scheduled: sched}},
		{ns, podSpec{name: "unbound", gpus: []int64{8}}},
		{ns, podSpec{name: "done", node: "gpu003", gpus: []int64{2}, labels: map[string]string{podsource.DefaultAccountLabel: "proj-a"},
			phase: corev1.PodSucceeded, scheduled: sched, ended: t0.Add(-30 * time.Minute)}},
		{mapped, podSpec{name: "infer", node: "gpu004", gpus: []int64{1}, initGPUs: []int64{2}, phase: corev1.PodPending, scheduled: sched}},
		{other, podSpec{name: "elsewhere", node: "gpu005", gpus: []int64{8}, phase: corev1.PodRunning, scheduled: sched}},
	} {
		createPod(t, core, p.ns, p.podSpec)
	}

	rules, err := kubetest.LoadRules("../../charts/toposcope/rbac/ledger-kubernetes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rc, err := c.ServiceAccountConfig(ctx, ns, "toposcope", rules.Cluster, rules.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	cfg := podsource.DefaultConfig()
	cfg.PageSize = 2
	cfg.Namespaces = []string{ns, mapped}
	cfg.NamespaceAccounts = map[string]string{mapped: "proj-b"}
	sa, err := kubeclient.NewClients(cfg.Tune(rc))
	if err != nil {
		t.Fatal(err)
	}
	src, err := podsource.New(cfg, sa.Core, nil)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := src.Records(ctx, t0)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]placement.Record{}
	for _, r := range recs {
		got[r.Workload[:strings.IndexByte(r.Workload, '@')]] = r
	}
	want := map[string]placement.Record{
		ns + "/train": {Account: "proj-a", GPUs: 8, Nodes: []string{"gpu001"}, Start: sched, MinRuntime: 2 * time.Hour,
			Allocated: true, Resumable: true},
		ns + "/fallback":  {Account: ns, GPUs: 1, Nodes: []string{"gpu002"}, Start: sched},
		ns + "/done":      {Account: "proj-a", GPUs: 2, Nodes: []string{"gpu003"}, Start: sched, End: t0.Add(-30 * time.Minute)},
		mapped + "/infer": {Account: "proj-b", GPUs: 2, Nodes: []string{"gpu004"}, Start: sched},
	}
	if len(got) != len(want) || len(recs) != len(want) {
		t.Fatalf("records %+v, want the workloads of %v", recs, want)
	}
	for w, exp := range want {
		r := got[w]
		if r.Account != exp.Account || r.GPUs != exp.GPUs || !slices.Equal(r.Nodes, exp.Nodes) || !r.Start.Equal(exp.Start) ||
			!r.End.Equal(exp.End) || r.MinRuntime != exp.MinRuntime || r.Allocated != exp.Allocated || r.Resumable != exp.Resumable ||
			r.Submit.IsZero() {
			t.Errorf("%s: got %+v, want %+v", w, r, exp)
		}
	}

	store := placement.NewBooks()
	now := t0
	syncer, err := placement.NewSyncer(store, []placement.Source{src}, time.Minute, func() time.Time { return now }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := syncer.SyncOnce(ctx); err != nil {
		t.Fatal(err)
	}
	createPod(t, core, ns, podSpec{name: "typo", node: "gpu006", gpus: []int64{1},
		annots: map[string]string{podsource.DefaultMinRuntimeAnnotation: "two hours"}, phase: corev1.PodRunning, scheduled: sched})
	now = t0.Add(time.Minute)
	err = syncer.SyncOnce(ctx)
	if !errors.Is(err, podsource.ErrAnnotation) || !strings.Contains(err.Error(), ns+"/typo") ||
		!strings.Contains(err.Error(), podsource.DefaultMinRuntimeAnnotation) {
		t.Fatalf("bad annotation: err %v", err)
	}
	for _, name := range []string{"typo", "train"} {
		if err := core.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
			t.Fatal(err)
		}
	}
	now = t0.Add(2 * time.Minute)
	if err := syncer.SyncOnce(ctx); err != nil {
		t.Fatal(err)
	}
	v, err := store.View(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ended := map[string]time.Time{}
	for _, r := range v.Records {
		if r.Source != podsource.Name {
			t.Errorf("%s: source %q", r.Workload, r.Source)
		}
		ended[r.Workload[:strings.IndexByte(r.Workload, '@')]] = r.End
	}
	if len(v.Records) != 4 || !ended[ns+"/train"].Equal(now) || !ended[ns+"/done"].Equal(t0.Add(-30*time.Minute)) ||
		!ended[ns+"/fallback"].IsZero() {
		t.Fatalf("store after the syncs: %+v", v.Records)
	}
}

// TestConfigErrors names each bad field.
func TestConfigErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		edit  func(*podsource.Config)
		field string
	}{
		{"label", func(c *podsource.Config) { c.AccountLabel = "not a key" }, "accountLabel"},
		{"annotation", func(c *podsource.Config) { c.MinRuntimeAnnotation = "" }, "minRuntimeAnnotation"},
		{"no resources", func(c *podsource.Config) { c.Resources = nil }, "resources"},
		{"resource", func(c *podsource.Config) { c.Resources = []string{"nvidia.com/gpu", "bad key!"} }, "resources[1]"},
		{"namespace", func(c *podsource.Config) { c.Namespaces = []string{"Team_A"} }, "namespaces[0]"},
		{"mapping", func(c *podsource.Config) { c.NamespaceAccounts = map[string]string{"team": ""} }, "namespaceAccounts.team"},
		{"qps", func(c *podsource.Config) { c.QPS = 0 }, "qps"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := podsource.DefaultConfig()
			tc.edit(&cfg)
			err := cfg.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("err %v, want one naming %s", err, tc.field)
			}
		})
	}
}
