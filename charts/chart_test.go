// Package charts_test checks the Helm chart in charts/toposcope with the
// real helm: lint, schema, golden renderings, the rendered configuration
// against the service's own validation, the values table of the README,
// and (install_test.go) install, upgrade and uninstall on a real
// kube-apiserver.
package charts_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/testenv/helmtest"
	"github.com/toposcope/toposcope/testenv/kubetest"
)

var update = flag.Bool("update", false, "rewrite the golden renderings and the chart README's values table")

// chartDir is the chart under test.
const chartDir = "toposcope"

// example is a values file of the chart's examples folder, or the
// defaults (path "").
type example struct{ name, path string }

func examples(t *testing.T) []example {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(chartDir, "examples", "*.yaml"))
	if err != nil || len(files) < 5 {
		t.Fatalf("examples: %v %v (want at least 5)", files, err)
	}
	out := []example{{name: "default"}}
	for _, f := range files {
		out = append(out, example{name: strings.TrimSuffix(filepath.Base(f), ".yaml"), path: f})
	}
	return out
}

// render runs helm template for a release "toposcope" in namespace
// "toposcope" with the values files and --set arguments given.
func render(t *testing.T, h *helmtest.Helm, args ...string) (string, error) {
	t.Helper()
	return h.Run(context.Background(), append([]string{"template", "toposcope", chartDir, "--namespace", "toposcope"}, args...)...)
}

func valuesArgs(e example) []string {
	if e.path == "" {
		return nil
	}
	return []string{"-f", e.path}
}

// TestLint: helm lint --strict passes with the defaults and with every
// example values file.
func TestLint(t *testing.T) {
	t.Parallel()
	h := helmtest.Require(t)
	for _, e := range examples(t) {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			out, err := h.Run(context.Background(), append([]string{"lint", "--strict", chartDir}, valuesArgs(e)...)...)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
		})
	}
}

// TestTemplateGolden compares helm template of each example with
// testdata/<example>.yaml (go test ./charts -update rewrites them), and
// checks that every object parses and carries the chart's labels.
func TestTemplateGolden(t *testing.T) {
	t.Parallel()
	h := helmtest.Require(t)
	for _, e := range examples(t) {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			out, err := render(t, h, valuesArgs(e)...)
			if err != nil {
				t.Fatal(err)
			}
			objs, err := kubetest.DecodeYAML([]byte(out))
			if err != nil {
				t.Fatalf("rendering does not parse: %v", err)
			}
			for _, o := range objs {
				if o.GetLabels()["app.kubernetes.io/instance"] != "toposcope" {
					t.Errorf("%s %s lacks app.kubernetes.io/instance", o.GetKind(), o.GetName())
				}
			}
			golden := filepath.Join("testdata", e.name+".yaml")
			if *update {
				if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./charts -update)", err)
			}
			if string(want) != out {
				t.Errorf("helm template differs from %s (go test ./charts -update rewrites it):\n%s", golden, firstDiff(string(want), out))
			}
		})
	}
}

// firstDiff shows the first line where got departs from want.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return "line " + strconv.Itoa(i+1) + ":\n  want: " + wl + "\n  got:  " + gl
		}
	}
	return ""
}

// TestValuesRejected: the schema and the chart's own checks refuse wrong
// values with a message that names them.
func TestValuesRejected(t *testing.T) {
	t.Parallel()
	h := helmtest.Require(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"wrong type", []string{"--set", "replicaCount=two"}, "/replicaCount"},
		{"zero replicas", []string{"--set", "replicaCount=0"}, "/replicaCount"},
		{"unknown top-level key", []string{"--set", "replicas=2"}, "'replicas' not allowed"},
		{"unknown nested key", []string{"--set", "agent.enable=true"}, "'enable' not allowed"},
		{"bad enum", []string{"--set", "agent.metadata=azure"}, "/agent/metadata"},
		{"bad port", []string{"--set", "service.port=70000"}, "/service/port"},
		{"bad duration", []string{"--set", "agent.interval=soon"}, "/agent/interval"},
		{"sysfs outside /sys", []string{"--set", "agent.sysfs=/etc"}, "/agent/sysfs"},
		{"engine without name", []string{"--set", "config.engines[0].params.mode=print"}, "name"},
		{"unknown config section", []string{"--set", "config.sever.listen=x"}, "'sever' not allowed"},
		{"persistence with replicas", []string{"--set", "persistence.enabled=true", "--set", "replicaCount=2"}, "persistence.enabled needs replicaCount 1"},
		{"database without its Secret", []string{"--set", "database.driver=postgres"}, "database.existingSecret"},
		{"database and persistence", []string{"--set", "database.driver=mysql", "--set", "database.existingSecret=db", "--set", "persistence.enabled=true"}, "alternatives"},
		{"unknown database driver", []string{"--set", "database.driver=sqlite"}, "/database/driver"},
		{"followers need a read token", []string{"--set", "auth.existingSecret=tok", "--set", "replicaCount=2"}, "auth.peerTokenKey"},
		{"budget that blocks drains", []string{"--set", "podDisruptionBudget.enabled=true", "--set", "replicaCount=2", "--set", "podDisruptionBudget.minAvailable=2"}, "podDisruptionBudget.minAvailable (2) must be less than replicaCount (2)"},
		{"agent maxUnavailable zero", []string{"--set", "agent.updateStrategy.rollingUpdate.maxUnavailable=0"}, "/agent/updateStrategy/rollingUpdate/maxUnavailable"},
		{"agent maxUnavailable 0%", []string{"--set", "agent.updateStrategy.rollingUpdate.maxUnavailable=0%"}, "/agent/updateStrategy/rollingUpdate/maxUnavailable"},
		{"agent health port", []string{"--set", "agent.healthPort=70000"}, "/agent/healthPort"},
		{"bad scrape scheme", []string{"--set", "metrics.serviceMonitor.scheme=ftp"}, "/metrics/serviceMonitor/scheme"},
		{"scrape TLS over http", []string{"--set", "metrics.serviceMonitor.enabled=true", "--set", "metrics.serviceMonitor.scheme=http", "--set", "metrics.serviceMonitor.tlsConfig.serverName=x"}, "tlsConfig needs the https scheme"},
		{"egress CIDR", []string{"--set", "networkPolicy.egress.apiServerCIDRs[0]=apiserver"}, "/networkPolicy/egress/apiServerCIDRs/0"},
		{"spread without a key", []string{"--set", "topologySpreadConstraints[0].maxSkew=1"}, "/topologySpreadConstraints/0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, err := render(t, h, tt.args...)
			if err == nil {
				t.Fatalf("rendered, want an error naming %q:\n%s", tt.want, out)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error lacks %q:\n%v", tt.want, err)
			}
		})
	}
}
