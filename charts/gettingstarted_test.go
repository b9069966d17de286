package charts_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/testenv/helmtest"
	"github.com/toposcope/toposcope/testenv/kubetest"
)

// gettingStarted is the page whose commands TestGettingStarted runs.
const gettingStarted = "../docs/install-kubernetes.md"

// TestGettingStarted runs the helm install command of
// docs/install-kubernetes.md as written, then publishes with the
// installed configuration's engines and the chart's ServiceAccount token,
// and checks what the page's kubectl commands show: every label key of
// `kubectl get nodes -L` on the Nodes, and the Kueue Topology it names
// with those keys as levels.
//
// Not parallel: it and TestInstallUpgradeUninstall own the cluster's Nodes
// while they run.
func TestGettingStarted(t *testing.T) {
	c := kube.Require(t)
	h := helmtest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	page, err := os.ReadFile(gettingStarted)
	if err != nil {
		t.Fatal(err)
	}
	install := pageCommand(t, string(page), "helm install ")
	labels := pageCommand(t, string(page), "kubectl get nodes ")
	topo := pageCommand(t, string(page), "kubectl get topologies.kueue.x-k8s.io ")

	dir := t.TempDir()
	kc := filepath.Join(dir, "admin.kubeconfig")
	if err := kubetest.WriteKubeconfig(kc, c.AdminConfig()); err != nil {
		t.Fatal(err)
	}
	args := slices.Clone(install[1:])
	for i, a := range args { // the page runs from the repository root
		if strings.HasPrefix(a, "charts/") {
			args[i] = filepath.Join("..", a)
		}
	}
	if _, err := h.Run(ctx, append(args, "--kubeconfig", kc)...); err != nil {
		t.Fatalf("the page's %q: %v", strings.Join(install, " "), err)
	}
	ns := flagValue(install, "--namespace")
	manifest, err := h.Run(ctx, "get", "manifest", install[2], "--namespace", ns, "--kubeconfig", kc)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse([]byte(renderedConfig(t, manifest)))
	if err != nil {
		t.Fatalf("the installed configuration: %v", err)
	}
	var fabric config.Plugin
	fabric.Name = "sim"
	config.SetParam(&fabric.Params, "model", "fat-tree-512")
	g := discoverNodes(ctx, t, c, fabric)

	// The release name is the chart's full name when it holds the chart name.
	_, serveKC := serviceAccountKubeconfig(ctx, t, c, ns, install[2], dir)
	publishAs(ctx, t, cfg, serveKC, g)

	keys := strings.Split(flagValue(labels, "-L"), ",")
	for _, n := range g.Nodes() {
		node, err := c.Core().CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if node.Labels[k] == "" {
				t.Errorf("node %s has no %s, which the page's kubectl shows", n.Name, k)
			}
		}
	}
	gvr := schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "topologies"}
	obj, err := c.Dynamic().Resource(gvr).Get(ctx, topo[3], metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the page's Topology %s: %v", topo[3], err)
	}
	levels := topologyLevels(obj.Object)
	want := append(slices.Clone(keys), "kubernetes.io/hostname")
	slices.Reverse(want[:len(keys)])
	if !slices.Equal(levels, want) {
		t.Errorf("Topology %s levels = %v, want %v (the page's label keys, coarsest first)", topo[3], levels, want)
	}
}

// topologyLevels reads spec.levels[].nodeLabel of a Topology.
func topologyLevels(obj map[string]any) []string {
	spec, _ := obj["spec"].(map[string]any)
	items, _ := spec["levels"].([]any)
	var out []string
	for _, it := range items {
		m, _ := it.(map[string]any)
		s, _ := m["nodeLabel"].(string)
		out = append(out, s)
	}
	return out
}

// pageCommand returns the words of the first shell command of a ```sh
// block of page that starts with prefix, its continuation lines joined.
func pageCommand(t *testing.T, page, prefix string) []string {
	t.Helper()
	inBlock := false
	var cmd strings.Builder
	for _, line := range strings.Split(page, "\n") {
		switch {
		case strings.HasPrefix(line, "```sh"):
			inBlock = true
			continue
		case strings.HasPrefix(line, "```"):
			inBlock = false
			continue
		}
		if !inBlock || (cmd.Len() == 0 && !strings.HasPrefix(line, prefix)) {
			continue
		}
		if body, more := strings.CutSuffix(line, "\\"); more {
			cmd.WriteString(body)
			continue
		}
		cmd.WriteString(line)
		words, err := shellWords(cmd.String())
		if err != nil {
			t.Fatalf("%s: %q: %v", gettingStarted, cmd.String(), err)
		}
		return words
	}
	t.Fatalf("%s has no command starting %q in a sh block", gettingStarted, prefix)
	return nil
}

// flagValue returns the value of a flag given as "--flag value" or
// "--flag=value".
func flagValue(words []string, flag string) string {
	for i, w := range words {
		if w == flag && i+1 < len(words) {
			return words[i+1]
		}
		if v, ok := strings.CutPrefix(w, flag+"="); ok {
			return v
		}
	}
	return ""
}

// shellWords splits a command line as a POSIX shell would for the
// forms the page uses: white space, single and double quotes, and a
// backslash that escapes the next character outside single quotes.
func shellWords(line string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	quote := rune(0)
	escaped := false
	for _, r := range line {
		switch {
		case escaped:
			if quote == '"' && r != '"' && r != '\\' && r != '$' {
				w.WriteRune('\\')
			}
			w.WriteRune(r)
			escaped = false
		case r == '\\' && quote != '\'':
			escaped, inWord = true, true
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			w.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 || escaped {
		return nil, fmt.Errorf("unterminated quote or escape")
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}
