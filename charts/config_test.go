package charts_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/toposcope/toposcope/cmd/toposcope/agentcmd"
	"github.com/toposcope/toposcope/cmd/toposcope/cli"
	"github.com/toposcope/toposcope/cmd/toposcope/logflags"
	"github.com/toposcope/toposcope/testenv/helmtest"
	"github.com/toposcope/toposcope/testenv/kubetest"
)

// renderedConfig returns the config.yaml of the chart's ConfigMap.
func renderedConfig(t *testing.T, manifest string) string {
	t.Helper()
	objs, err := kubetest.DecodeYAML([]byte(manifest))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetKind() == "ConfigMap" && o.GetLabels()["app.kubernetes.io/component"] == "serve" {
			data, _, _ := unstructured.NestedString(o.Object, "data", "config.yaml")
			if data == "" {
				t.Fatalf("ConfigMap %s has no config.yaml", o.GetName())
			}
			return data
		}
	}
	t.Fatal("no serve ConfigMap in the rendering")
	return ""
}

// TestRenderedConfigIsValid runs `toposcope check` (the service's own
// validation, and the build of every plugin) on the configuration file
// that each example renders. Kubernetes plugins build their clients from
// $KUBECONFIG, so the test sets it and does not run in parallel.
func TestRenderedConfigIsValid(t *testing.T) {
	h := helmtest.Require(t)
	dir := t.TempDir()
	t.Setenv("KUBECONFIG", unreachableKubeconfig(t))
	for _, e := range examples(t) {
		t.Run(e.name, func(t *testing.T) {
			out, err := render(t, h, valuesArgs(e)...)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, e.name+".yaml")
			if err := os.WriteFile(path, []byte(renderedConfig(t, out)), 0o600); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			code := cli.Main(context.Background(), []string{"check", "--config", path}, cli.Env{Stdout: &stdout, Stderr: &stderr})
			if code != 0 || !strings.Contains(stdout.String(), "valid") {
				t.Fatalf("toposcope check: exit %d\n%s%s", code, stdout.String(), stderr.String())
			}
		})
	}
	// And the check can fail: a key the service does not know (which the
	// chart's schema refuses first: TestChartRefusesConfigTypo; skipped
	// here to reach the service's own check).
	out, err := render(t, h, "--skip-schema-validation", "--set", "config.engines[0].name=k8s-labels", "--set", "config.engines[0].params.colour=red")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(path, []byte(renderedConfig(t, out)), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := cli.Main(context.Background(), []string{"check", "--config", path}, cli.Env{Stdout: &stdout, Stderr: &stderr}); code != cli.ExitUsage ||
		!strings.Contains(stderr.String(), "engines[0].params.colour") {
		t.Fatalf("check of an unknown key: exit %d, stderr %s", code, stderr.String())
	}
}

// TestRenderedAgentArgs parses the agent DaemonSet's rendered arguments
// with the agent binary's own command: every flag the chart passes is one
// that toposcope-agent takes, with a value it accepts.
func TestRenderedAgentArgs(t *testing.T) {
	t.Parallel()
	h := helmtest.Require(t)
	out, err := render(t, h, "--set", "agent.enabled=true", "--set", "agent.metadata=aws")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := kubetest.DecodeYAML([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, o := range objs {
		if o.GetKind() != "DaemonSet" {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		for _, c := range containers {
			if m, _ := c.(map[string]any); m["name"] == "agent" {
				a, _, _ := unstructured.NestedStringSlice(m, "args")
				args = a
			}
		}
	}
	if len(args) == 0 {
		t.Fatal("no agent container with arguments in the rendering")
	}
	cmd := agentcmd.New("toposcope-agent", io.Discard, nil)
	var logs logflags.Flags
	logs.Register(cmd.Flags())
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatalf("toposcope-agent refuses the chart's arguments %q: %v", args, err)
	}
	if rest := cmd.Flags().Args(); len(rest) > 0 {
		t.Errorf("the chart passes positional arguments %q, which toposcope-agent refuses", rest)
	}
	if _, err := logs.Logger(io.Discard); err != nil {
		t.Error(err)
	}
	for flag, want := range map[string]string{"annotate": "true", "metadata": "aws", "interval": "10m0s"} {
		if got := cmd.Flags().Lookup(flag).Value.String(); got != want {
			t.Errorf("--%s = %q, want %q", flag, got, want)
		}
	}
}

// unreachableKubeconfig writes a kubeconfig that names an apiserver
// nobody serves (127.0.0.1:1): enough for what builds clients without
// calling them.
func unreachableKubeconfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: unused}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
