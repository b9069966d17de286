package main_test

import (
	"bufio"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/toposcope/toposcope/testenv/budget"
	"github.com/toposcope/toposcope/testenv/kubetest"
	"github.com/toposcope/toposcope/testenv/releasebin"
)

// TestDeadCodeElimination reads the linker's dependency dump of the
// release binary (`make build DEPDUMP=...`: `make test` links it once for
// every test of the run) and fails when a reachable function looks methods up at
// run time (reflect.Value.MethodByName with a name that is not a
// constant, or Method(i)): the linker then keeps every exported method of every
// type, and the cloud SDK clients more than double the binary (127.5 MB
// against 56.4 MB). The failure shows the chain from main that reaches
// it (text/template, html/template and golang.org/x/net/trace are the
// usual culprits).
func TestDeadCodeElimination(t *testing.T) {
	t.Parallel()
	if testing.Short() && !kubetest.InCI() {
		t.Skip("-short: links the whole binary")
	}
	rel := releasebin.Get(budget.Context(t, 20*time.Minute), t)
	dump, err := os.Open(rel.Deps)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = dump.Close() }()
	parent := map[string]string{}
	var culprit string
	sc := bufio.NewScanner(dump)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		rawFrom, rawTo, ok := strings.Cut(sc.Text(), " -> ")
		if !ok {
			continue
		}
		from, to := symbol(rawFrom), symbol(rawTo)
		if _, seen := parent[to]; !seen {
			parent[to] = from
		}
		// A reachable function marked <ReflectMethod> calls a method it
		// looks up at run time: from then on the linker keeps them all.
		if culprit == "" && strings.HasSuffix(rawFrom, "<ReflectMethod>") {
			culprit = from
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(parent) < 1000 {
		t.Fatalf("the dependency dump has %d edges: not the linker's -dumpdep output?", len(parent))
	}
	if culprit == "" {
		return
	}
	chain := []string{culprit}
	for x, n := culprit, 0; n < 30; n++ {
		p, ok := parent[x]
		if !ok || p == "_" {
			break
		}
		chain, x = append(chain, p), p
	}
	t.Errorf("reflect method lookup is reachable, so the linker keeps every exported method:\n  %s", strings.Join(chain, "\n  <- "))
}

// symbol drops the linker's markers (<ReflectMethod>, <UsedInIface>)
// from a -dumpdep symbol; names may hold spaces (type:struct { ... }).
func symbol(s string) string {
	for _, m := range []string{" <ReflectMethod>", " <UsedInIface>"} {
		s = strings.ReplaceAll(s, m, "")
	}
	return strings.TrimSpace(s)
}

// TestNoHeavyInit keeps out of the release binary the packages whose
// initialisation every command paid for though almost none used them
// (docs/performance.md, "Start-up"): cloud.google.com/go/compute's
// protocol buffer descriptors (12 ms; the gcp provider reads the same
// REST API with google.golang.org/api/compute/v1), gin's msgpack
// codec (1.8 ms; the nomsgpack build tag), and client-go's clientset,
// whose scheme registers every built-in kind (8.6 ms, and some 12 MB of
// binary with its typed clients, leader election and informers;
// kubeclient.Core reaches the few kinds toposcope uses), and the
// markdown renderer cobra's man pages went through (1.8 ms; roff.go
// writes them).
func TestNoHeavyInit(t *testing.T) {
	t.Parallel()
	if testing.Short() && !kubetest.InCI() {
		t.Skip("-short: links the whole binary")
	}
	rel := releasebin.Get(budget.Context(t, 20*time.Minute), t)
	data, err := os.ReadFile(rel.Deps)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "github.com/toposcope/toposcope/providers/gcp.") {
		t.Fatal("the dependency dump does not mention the gcp provider: not the release binary's?")
	}
	for _, pkg := range []string{"cloud.google.com/go/compute/apiv1", "github.com/ugorji/go/codec.",
		"k8s.io/client-go/kubernetes/scheme.", "k8s.io/client-go/kubernetes/typed/", "k8s.io/client-go/tools/leaderelection.",
		"github.com/russross/blackfriday/v2."} {
		if i := strings.Index(string(data), pkg); i >= 0 {
			line := string(data[i:min(len(data), i+200)])
			line, _, _ = strings.Cut(line, "\n")
			t.Errorf("the release binary links %s again: %s", pkg, line)
		}
	}
}
