package layering

import (
	"bufio"
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/toposcope/toposcope"

// A layer is a rank and a family: a package may import a package of a
// lower rank, or one of its own rank and family (engines/slinky may
// import engines/slurm, but no engine may import a provider).
type layer struct {
	rank   int
	family string
}

// rules maps a module-relative path prefix to its layer; the longest
// matching prefix wins.
var rules = map[string]layer{
	"keys":                   {0, "lib"},
	"internal/hostlist":      {0, "lib"},
	"internal/atomicfile":    {0, "lib"},
	"internal/bounded":       {0, "lib"},
	"internal/httpretry":     {0, "lib"},
	"internal/slurmrest":     {0, "lib"},
	"internal/config":        {0, "lib"},
	"internal/kubeclient":    {0, "lib"},
	"internal/layering":      {0, "lib"},
	"internal/progress":      {0, "lib"},
	"internal/registry":      {0, "lib"},
	"internal/strictjson":    {0, "lib"},
	"testenv":                {2, "testenv"},
	"testenv/consumertest":   {3, "testenv"}, // builds fabrics with the engines and providers
	"testenv/netlab/lldpmib": {3, "testenv"}, // serves a lab switch's lldpd as LLDP-MIB with the lldp parser
	"topology":               {1, "topology"},
	"providers":              {2, "providers"},
	"engines":                {2, "engines"},
	"placement":              {2, "placement"},
	"plugins":                {3, "plugins"},
	"service":                {4, "service"},
	"agent":                  {4, "agent"},
	"server":                 {5, "server"},
	"app":                    {6, "root"},
	"cmd":                    {7, "cmd"},
	"charts":                 {7, "cmd"},
	"packaging":              {7, "cmd"},
	"consumers":              {7, "cmd"},
	"tools":                  {7, "cmd"},
}

func layerOf(rel string) (layer, bool) {
	best, found, bestLen := layer{}, false, -1
	for prefix, l := range rules {
		if (rel == prefix || strings.HasPrefix(rel, prefix+"/")) && len(prefix) > bestLen {
			best, found, bestLen = l, true, len(prefix)
		}
	}
	return best, found
}

// allowed reports whether a package of layer from may import one of
// layer to.
func allowed(from, to layer) bool {
	if to.family == "testenv" {
		return from.family == "testenv" // harnesses are for tests (and other harnesses) only
	}
	return to.rank < from.rank || (to.rank == from.rank && to.family == from.family)
}

// TestImportsPointOneWay lists every package of the module with `go list
// -deps` and fails on a non-test import that points up or sideways, and
// on a package that no rule places.
func TestImportsPointOneWay(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	checked := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		from, ok := strings.CutPrefix(fields[0], module+"/")
		if !ok {
			continue // the standard library and other modules
		}
		fl, ok := layerOf(from)
		if !ok {
			t.Errorf("package %s is in no layer: add it to the rules here and to docs/architecture.md", from)
			continue
		}
		checked++
		for _, imp := range fields[1:] {
			to, ok := strings.CutPrefix(imp, module+"/")
			if !ok {
				continue
			}
			tl, ok := layerOf(to)
			if ok && !allowed(fl, tl) {
				t.Errorf("%s (%s, layer %d) imports %s (%s, layer %d): imports must point down", from, fl.family, fl.rank, to, tl.family, tl.rank)
			}
		}
	}
	if checked < 40 {
		t.Fatalf("checked only %d packages of the module; is go list's output what this test expects?", checked)
	}
}

// TestRules: the check itself refuses what it should.
func TestRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		from, to string
		ok       bool
	}{
		{"providers/aws", "providers/cloud", true},
		{"engines/slinky", "engines/slurm", true},
		{"engines/kube", "providers", false},
		{"providers/k8slabels", "agent", false},
		{"internal/kubeclient", "engines", false},
		{"service", "app", false},
		{"service", "plugins", true},
		{"server", "service/store", true},
		{"service/store", "server", false},
		{"cmd/toposcope/cli", "app", true},
		{"engines/slurm", "testenv/slurmtest", false},
		{"topology", "internal/hostlist", true},
		{"placement", "providers", false},
	}
	for _, tt := range tests {
		fl, ok1 := layerOf(tt.from)
		tl, ok2 := layerOf(tt.to)
		if !ok1 || !ok2 {
			t.Fatalf("%s or %s in no layer", tt.from, tt.to)
		}
		if got := allowed(fl, tl); got != tt.ok {
			t.Errorf("%s -> %s allowed = %v, want %v", tt.from, tt.to, got, tt.ok)
		}
	}
}

// TestAgentLinksNoCloudSDK: the node agent's own binary, which every node
// of a cluster runs, links no cloud SDK and no provider or engine; it
// reads the metadata services with its own small client.
func TestAgentLinksNoCloudSDK(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("go", "list", "-deps", module+"/cmd/toposcope-agent")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	banned := []string{"github.com/aws/", "cloud.google.com/", "google.golang.org/api/", "github.com/oracle/",
		module + "/app", module + "/engines/", module + "/plugins", module + "/service"}
	deps := strings.Fields(string(out))
	for _, d := range deps {
		for _, b := range banned {
			if strings.HasPrefix(d, b) {
				t.Errorf("cmd/toposcope-agent links %s", d)
			}
		}
	}
	if !slices.Contains(deps, module+"/agent") {
		t.Fatalf("cmd/toposcope-agent does not link the agent package; is go list's output what this test expects? %d deps", len(deps))
	}
}
