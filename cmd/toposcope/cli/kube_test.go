package cli_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/toposcope/toposcope/testenv/kubetest"
)

// TestGenerateKubernetesLabels runs `toposcope generate --engine k8s-labels`
// against the real apiserver: a dry run writes nothing, the first run
// labels every node, the second changes nothing.
func TestGenerateKubernetesLabels(t *testing.T) {
	t.Parallel()
	c := kube.Require(t)
	ctx := context.Background()
	for _, name := range []string{"gpu001", "gpu002", "gpu009"} {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"team": "ml"}}}
		if _, err := c.Core().CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	admin := c.AdminConfig()
	kubeconfig := writeKubeconfig(t, c.Host(), admin.BearerToken, admin.CAFile)

	r := run(t, "generate", "--engine", "k8s-labels", "--kubeconfig", kubeconfig, "--dry-run")
	if r.code != 0 || !strings.Contains(r.stdout, "3 to change") || !strings.Contains(r.stdout, "patch Node/gpu009") {
		t.Fatalf("dry run: %+v", r)
	}
	if n, _ := c.Core().CoreV1().Nodes().Get(ctx, "gpu001", metav1.GetOptions{}); len(n.Labels) != 1 {
		t.Fatalf("dry run wrote labels: %v", n.Labels)
	}

	r = run(t, "generate", "--engine", "k8s-labels", "--kubeconfig", kubeconfig)
	if r.code != 0 || !strings.Contains(r.stdout, "3 changed") {
		t.Fatalf("publish: %+v", r)
	}
	want := map[string]string{"gpu001": "leaf1", "gpu002": "leaf1", "gpu009": "leaf2"}
	for name, leaf := range want {
		n, err := c.Core().CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if n.Labels["topology.toposcope.io/tier-0"] != leaf || n.Labels["topology.toposcope.io/tier-1"] != "spine1" || n.Labels["team"] != "ml" {
			t.Errorf("%s labels = %v", name, n.Labels)
		}
	}

	r = run(t, "generate", "--engine", "k8s-labels", "--kubeconfig", kubeconfig)
	if r.code != 0 || !strings.Contains(r.stdout, "0 changed") {
		t.Fatalf("second publish: %+v", r)
	}
}

func writeKubeconfig(t *testing.T, host, token, caFile string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := kubetest.WriteKubeconfig(path, &rest.Config{Host: host, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAFile: caFile}}); err != nil {
		t.Fatal(err)
	}
	return path
}
