package charts_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/testenv/helmtest"
	"github.com/toposcope/toposcope/testenv/kubetest"
)

// TestSchedulerExtender: with schedulerExtender.enabled the rendered
// service configuration turns the extender on and lets the Service's
// DNS name through as a Host, and the chart's
// KubeSchedulerConfiguration is accepted by the real kube-scheduler
// 1.37.2 (it loads, validates and completes the file, builds the
// profile with the extender, and writes the result with
// --write-config-to), calling the chart's Service. With TLS configured it
// calls https with a client certificate; a weight of 0 is refused by the
// values schema.
func TestSchedulerExtender(t *testing.T) {
	t.Parallel()
	h := helmtest.Require(t)
	bin, err := kubetest.FindScheduler()
	if err != nil {
		if kubetest.InCI() {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	out, err := render(t, h, "--set", "schedulerExtender.enabled=true")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse([]byte(renderedConfig(t, out)))
	if err != nil {
		t.Fatal(err)
	}
	if ext := cfg.Placement.Extender; !ext.Enabled || len(ext.Clients) != 0 {
		t.Errorf("rendered placement.extender %+v, want enabled without clients", ext)
	}
	// Without tokens a POST is let through for a known Host only, and the
	// scheduler calls the Service by its DNS name (server's
	// TestExtenderHost checks the service side).
	if !slices.Contains(cfg.Server.Auth.AllowedHosts, "toposcope.toposcope.svc") {
		t.Errorf("rendered server.auth.allowedHosts %v lacks the Service name the scheduler calls", cfg.Server.Auth.AllowedHosts)
	}
	sched := schedulerConfig(t, out)
	dir := t.TempDir()
	// Never contacted: --write-config-to exits before the scheduler runs.
	kubeconfig := unreachableKubeconfig(t)
	file := filepath.Join(dir, "scheduler.yaml")
	if err := os.WriteFile(file, []byte(sched+"clientConnection:\n  kubeconfig: "+kubeconfig+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	written := filepath.Join(dir, "written.yaml")
	cmd := exec.CommandContext(t.Context(), bin, "--config="+file, "--write-config-to="+written, "--secure-port=0")
	if log, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kube-scheduler refused the chart's configuration: %v\n%s", err, log)
	}
	var got struct {
		Profiles []struct {
			SchedulerName string `json:"schedulerName"`
		} `json:"profiles"`
		Extenders []struct {
			URLPrefix        string `json:"urlPrefix"`
			FilterVerb       string `json:"filterVerb"`
			PreemptVerb      string `json:"preemptVerb"`
			NodeCacheCapable bool   `json:"nodeCacheCapable"`
		} `json:"extenders"`
		PercentageOfNodesToScore *int32 `json:"percentageOfNodesToScore"`
	}
	data, err := os.ReadFile(written)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Profiles) != 1 || got.Profiles[0].SchedulerName != "toposcope" {
		t.Errorf("profiles %+v, want one named toposcope", got.Profiles)
	}
	if len(got.Extenders) != 1 || got.Extenders[0].URLPrefix != "http://toposcope.toposcope.svc:49021/v1/extender" ||
		got.Extenders[0].FilterVerb != "filter" || got.Extenders[0].PreemptVerb != "preempt" || !got.Extenders[0].NodeCacheCapable {
		t.Errorf("extenders as the scheduler read them: %+v", got.Extenders)
	}
	if got.PercentageOfNodesToScore == nil || *got.PercentageOfNodesToScore != 100 {
		t.Errorf("percentageOfNodesToScore %v, want 100 (a gang's held nodes must be among those passed)", got.PercentageOfNodesToScore)
	}

	tlsOut, err := render(t, h, "--set", "schedulerExtender.enabled=true", "--set", "config.server.tls.cert=/tls/tls.crt",
		"--set", "config.server.tls.key=/tls/tls.key", "--set", "config.server.tls.clientCA=/tls/ca.crt",
		"--set", "schedulerExtender.clients={kube-scheduler}")
	if err != nil {
		t.Fatal(err)
	}
	tlsCfg, err := config.Parse([]byte(renderedConfig(t, tlsOut)))
	if err != nil {
		t.Fatal(err)
	}
	if ext := tlsCfg.Placement.Extender; !ext.Enabled || len(ext.Clients) != 1 || ext.Clients[0] != "kube-scheduler" {
		t.Errorf("rendered placement.extender %+v, want enabled with client kube-scheduler", ext)
	}
	// Client names without a CA to verify them would not start the service.
	if _, err := render(t, h, "--set", "schedulerExtender.enabled=true", "--set", "schedulerExtender.clients={kube-scheduler}"); err == nil ||
		!strings.Contains(err.Error(), "config.server.tls.clientCA") {
		t.Errorf("clients without config.server.tls.clientCA rendered (err %v)", err)
	}
	if s := schedulerConfig(t, tlsOut); !strings.Contains(s, `urlPrefix: "https://toposcope.toposcope.svc:49021/v1/extender"`) ||
		!strings.Contains(s, "enableHTTPS: true") || !strings.Contains(s, "certFile:") {
		t.Errorf("with TLS the scheduler must call https with a client certificate:\n%s", s)
	}
	if _, err := render(t, h, "--set", "schedulerExtender.enabled=true", "--set", "schedulerExtender.weight=0"); err == nil ||
		!strings.Contains(err.Error(), "weight") {
		t.Errorf("weight 0 rendered (err %v); the schema must refuse it", err)
	}
	if off, err := render(t, h); err != nil || strings.Contains(off, "component: scheduler") {
		t.Errorf("the scheduler ConfigMap rendered with the extender off (err %v)", err)
	}
}

// schedulerConfig returns the chart's KubeSchedulerConfiguration.
func schedulerConfig(t *testing.T, manifest string) string {
	t.Helper()
	objs, err := kubetest.DecodeYAML([]byte(manifest))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetKind() == "ConfigMap" && o.GetLabels()["app.kubernetes.io/component"] == "scheduler" {
			s, _, _ := unstructured.NestedString(o.Object, "data", "scheduler-config.yaml")
			return s
		}
	}
	t.Fatal("no scheduler ConfigMap in the rendering")
	return ""
}
