package charts_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/infiniband"
	"github.com/toposcope/toposcope/testenv/helmtest"
	"github.com/toposcope/toposcope/testenv/kubetest"
)

// fabricValues turn the fabric reporter on, with the infiniband provider
// reading its ConfigMap in namespace %[1]s.
const fabricValues = `config:
  provider: {name: infiniband, params: {configMap: %[1]s/fab-toposcope-fabric}}
fabricReporter:
  enabled: true
  image: registry.example.com/infiniband-diags:1
  nodeSelector: {feature.node.kubernetes.io/rdma.available: "true"}
`

// TestFabricReporter installs the chart with the fabric reporter into the
// real apiserver with the real helm: the CronJob runs ibnetdiscover in the
// operator's image and `toposcope fabric-report` in the chart's; with the
// reporter's own ServiceAccount token (exactly the chart's Role) a saved
// ibnetdiscover output is written into the report ConfigMap, and nothing
// else may be read or written; with the serve ServiceAccount's token the
// infiniband provider reads it back into a graph. Without an image the
// chart refuses to render, naming fabricReporter.image.
func TestFabricReporter(t *testing.T) {
	t.Parallel()
	c := kube.Require(t)
	h := helmtest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := render(t, h, "--set", "fabricReporter.enabled=true"); err == nil || !strings.Contains(err.Error(), "image") {
		t.Errorf("the reporter without an image rendered: %v", err)
	}
	ns := c.Namespace(t)
	dir := t.TempDir()
	kc := filepath.Join(dir, "admin.kubeconfig")
	if err := kubetest.WriteKubeconfig(kc, c.AdminConfig()); err != nil {
		t.Fatal(err)
	}
	values := filepath.Join(dir, "values.yaml")
	if err := os.WriteFile(values, fmt.Appendf(nil, fabricValues, ns), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := h.Run(ctx, "install", "fab", chartDir, "-f", values, "--namespace", ns, "--kubeconfig", kc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Cleanup(func() { _, _ = h.Run(context.Background(), "uninstall", "fab", "--namespace", ns, "--kubeconfig", kc) })

	cj, err := c.Core().BatchV1().CronJobs(ns).Get(ctx, "fab-toposcope-fabric-reporter", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod := cj.Spec.JobTemplate.Spec.Template.Spec
	if len(pod.InitContainers) != 1 || pod.InitContainers[0].Image != "registry.example.com/infiniband-diags:1" ||
		len(pod.Containers) != 1 || !strings.Contains(strings.Join(pod.Containers[0].Args, " "), "fabric-report --configmap="+ns+"/fab-toposcope-fabric --input=/fabric/ibnetdiscover.out") ||
		pod.NodeSelector["feature.node.kubernetes.io/rdma.available"] != "true" || pod.ServiceAccountName != "fab-toposcope-fabric-reporter" {
		t.Errorf("CronJob pod %+v", pod)
	}

	rc, _ := serviceAccountKubeconfig(ctx, t, c, ns, "fab-toposcope-fabric-reporter", dir)
	clients, err := kubeclient.NewClients(rc)
	if err != nil {
		t.Fatal(err)
	}
	output, err := os.ReadFile("../providers/infiniband/testdata/example.out")
	if err != nil {
		t.Fatal(err)
	}
	report := infiniband.ReportConfigMap{Core: clients.Core, Namespace: ns, Name: "fab-toposcope-fabric"}
	if err := report.Write(ctx, output, "example.out", "ib01", time.Now()); err != nil {
		t.Fatalf("write as the reporter: %v", err)
	}
	if _, err := clients.Core.ConfigMaps(ns).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the reporter listing ConfigMaps: %v, want forbidden", err)
	}
	if _, err := kubernetes.NewForConfigOrDie(rc).CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the reporter listing Secrets: %v, want forbidden", err)
	}

	_, serveKC := serviceAccountKubeconfig(ctx, t, c, ns, "fab-toposcope", dir)
	cfg := infiniband.DefaultConfig()
	cfg.ConfigMap = ns + "/fab-toposcope-fabric"
	cfg.Kubernetes.Kubeconfig = serveKC
	p, err := infiniband.New(cfg, providers.Deps{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := p.Discover(ctx, providers.Request{})
	if err != nil || len(g.Nodes()) == 0 {
		t.Fatalf("discover from the report as the serve ServiceAccount: %v", err)
	}
}
