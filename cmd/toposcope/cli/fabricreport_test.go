package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/toposcope/toposcope/providers/infiniband"
	"github.com/toposcope/toposcope/testenv/kubetest"
)

// TestFabricReportCommand: `toposcope fabric-report` writes a saved
// ibnetdiscover output into the ConfigMap with the node it came from;
// garbled output is refused naming its line and nothing is written; a
// malformed --configmap is a usage error (exit 2).
func TestFabricReportCommand(t *testing.T) {
	t.Parallel()
	c := kube.Require(t)
	ctx := context.Background()
	ns := c.Namespace(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "fabric", Namespace: ns}}
	if _, err := c.Core().CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := kubetest.WriteKubeconfig(kubeconfig, c.AdminConfig()); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	good, err := os.ReadFile("../../../providers/infiniband/testdata/example.out")
	if err != nil {
		t.Fatal(err)
	}
	goodPath := filepath.Join(dir, "good.out")
	badPath := filepath.Join(dir, "bad.out")
	if err := os.WriteFile(goodPath, good, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(badPath, []byte(strings.Replace(string(good), "switchguid=", "swtchguid=", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	target := ns + "/fabric"
	if r := run(t, "fabric-report", "--configmap", "fabric", "--input", goodPath); r.code != 2 || !strings.Contains(r.stderr, "NAMESPACE/NAME") {
		t.Errorf("--configmap without a namespace: %+v", r)
	}
	r := run(t, "fabric-report", "--configmap", target, "--input", badPath, "--kubeconfig", kubeconfig, "--node", "ib01")
	if r.code == 0 || !strings.Contains(r.stderr, "bad.out:") || !strings.Contains(r.stderr, `unknown header "swtchguid"`) {
		t.Errorf("garbled output: %+v, want an error naming the file, line and header", r)
	}
	if got, _ := c.Core().CoreV1().ConfigMaps(ns).Get(ctx, "fabric", metav1.GetOptions{}); len(got.BinaryData) != 0 {
		t.Fatal("garbled output was written")
	}
	r = run(t, "fabric-report", "--configmap", target, "--input", goodPath, "--kubeconfig", kubeconfig, "--node", "ib01")
	if r.code != 0 || !strings.Contains(r.stdout, "into ConfigMap "+target) {
		t.Fatalf("fabric-report: %+v", r)
	}
	read, _, err := infiniband.ReportConfigMap{Core: c.Kube(), Namespace: ns, Name: "fabric"}.Read(ctx)
	if err != nil || string(read) != string(good) {
		t.Fatalf("read back: %d bytes, %v; want the %d bytes written", len(read), err, len(good))
	}
	got, _ := c.Core().CoreV1().ConfigMaps(ns).Get(ctx, "fabric", metav1.GetOptions{})
	if got.Annotations[infiniband.ReporterAnnotation] != "ib01" || got.Annotations[infiniband.ReportedAtAnnotation] == "" {
		t.Errorf("annotations %v", got.Annotations)
	}
}
