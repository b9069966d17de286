package infiniband_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/infiniband"
	"github.com/toposcope/toposcope/testenv/ibsim"
	"github.com/toposcope/toposcope/testenv/kubetest"
)

var env = kubetest.NewEnv()

func TestMain(m *testing.M) { os.Exit(env.Run(m)) }

// reportName is the ConfigMap the rule files name.
const reportName = "toposcope-fabric"

// TestFabricReport: the real ibnetdiscover on a simulated fabric; its
// output written by a ServiceAccount bound to exactly
// charts/toposcope/rbac/fabric-reporter.yaml (every rule used, and it can
// read no other ConfigMap) and read back by the infiniband provider as a
// ServiceAccount bound to exactly provider-infiniband-report.yaml gives
// the fabric's tree. Output the parser refuses is not written.
func TestFabricReport(t *testing.T) {
	t.Parallel()
	ibsim.Require(t)
	c := env.Require(t)
	ctx := context.Background()
	ns := c.Namespace(t)
	for _, name := range []string{reportName, "other"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
		if _, err := c.Core().CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	model, err := ibsim.Model(ibsim.ModelSpec{Links: []string{"spine>leaf1", "spine>leaf2"},
		Leaves: map[string]string{"leaf1": "gpu[001-004]", "leaf2": "gpu[005-008]"}})
	if err != nil {
		t.Fatal(err)
	}
	f, err := ibsim.Expand(model, ibsim.Expansion{})
	if err != nil {
		t.Fatal(err)
	}
	sim := ibsim.Start(t, f)
	output, err := infiniband.ExecRunner{}.Run(ctx, sim.Command())
	if err != nil {
		t.Fatalf("ibnetdiscover: %v", err)
	}

	rules, err := kubetest.LoadRules("../../charts/toposcope/rbac/fabric-reporter.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rc, err := c.ServiceAccountConfig(ctx, ns, "fabric-reporter", rules.Cluster, rules.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	counter := kubetest.NewCounter()
	clients, err := kubeclient.NewClients(counter.Instrument(rc))
	if err != nil {
		t.Fatal(err)
	}
	report := infiniband.ReportConfigMap{Core: clients.Core, Namespace: ns, Name: reportName}
	bad := strings.Replace(string(output), "Switch", "Swtich", 1)
	if err := report.Write(ctx, []byte(bad), "ibnetdiscover", "gpu001", time.Now()); !errors.Is(err, infiniband.ErrSyntax) {
		t.Fatalf("a garbled output: %v, want a syntax error", err)
	}
	if cm, _ := c.Core().CoreV1().ConfigMaps(ns).Get(ctx, reportName, metav1.GetOptions{}); len(cm.BinaryData) != 0 {
		t.Fatal("a garbled output was written")
	}
	if err := report.Write(ctx, output, "ibnetdiscover", "gpu001", time.Now()); err != nil {
		t.Fatalf("write as the reporter: %v", err)
	}
	if unused := rules.Unused(counter.Accesses()); len(unused) > 0 {
		t.Errorf("fabric-reporter.yaml grants permissions the reporter never used: %v", unused)
	}
	if _, err := clients.Core.ConfigMaps(ns).Get(ctx, "other", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the reporter reading another ConfigMap: %v, want forbidden", err)
	}

	prules, err := kubetest.LoadRules("../../charts/toposcope/rbac/provider-infiniband-report.yaml")
	if err != nil {
		t.Fatal(err)
	}
	prc, err := c.ServiceAccountConfig(ctx, ns, "toposcope", prules.Cluster, prules.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := kubetest.WriteKubeconfig(kubeconfig, prc); err != nil {
		t.Fatal(err)
	}
	cfg := infiniband.DefaultConfig()
	cfg.ConfigMap = ns + "/" + reportName
	cfg.Kubernetes.Kubeconfig = kubeconfig
	p, err := infiniband.New(cfg, providers.Deps{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := p.Discover(ctx, providers.Request{})
	if err != nil {
		t.Fatalf("discover from the report as the service: %v", err)
	}
	if err := ibsim.Compare(g, model, f); err != nil {
		t.Error(err)
	}
}

// TestReadWithoutReport: a report ConfigMap the reporter has not written
// yet, or none at all, is ErrNoReport naming it.
func TestReadWithoutReport(t *testing.T) {
	t.Parallel()
	c := env.Require(t)
	ctx := context.Background()
	ns := c.Namespace(t)
	r := infiniband.ReportConfigMap{Core: c.Kube(), Namespace: ns, Name: reportName}
	if _, _, err := r.Read(ctx); !errors.Is(err, infiniband.ErrNoReport) || !strings.Contains(err.Error(), ns+"/"+reportName) {
		t.Errorf("no ConfigMap: %v", err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: reportName, Namespace: ns}}
	if _, err := c.Core().CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Read(ctx); !errors.Is(err, infiniband.ErrNoReport) || !strings.Contains(err.Error(), "has the fabric reporter run?") {
		t.Errorf("empty ConfigMap: %v", err)
	}
}
