package app_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/app"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/testenv/ibsim"
)

// ibDocSection is the section of docs/kubernetes.md that says what a
// Kubernetes-only cluster with InfiniBand must run.
const ibDocSection = "## InfiniBand on Kubernetes"

// agentFacts are the JSON fields of providers.NodeFacts that the section
// describes. A field added to what the agent reports (an ibnetdiscover
// output, say) fails TestInfiniBandOnKubernetesDoc until the section and
// this list are brought up to date.
var agentFacts = []string{"node", "instanceID", "region", "zone", "gpus", "clique", "rack", "hcas", "fabric", "fabricDomain", "lldp"}

// docSection returns the text of the section of the markdown file that
// starts with heading, up to the next "## " heading.
func docSection(t *testing.T, file, heading string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("%s has no section %q", file, heading)
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// yamlBlock returns the first ```yaml block of text.
func yamlBlock(t *testing.T, text string) string {
	t.Helper()
	_, rest, ok := strings.Cut(text, "```yaml\n")
	if !ok {
		t.Fatal("no ```yaml block")
	}
	block, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatal("unterminated ```yaml block")
	}
	return block
}

// memReports are agent reports as the server's store gives them.
type memReports []providers.AgentReport

func (m memReports) AgentReports(context.Context) ([]providers.AgentReport, error) { return m, nil }

// TestInfiniBandOnKubernetesDoc keeps docs/kubernetes.md's "InfiniBand on
// Kubernetes" honest: the agent reports only the facts the section lists
// (no ibnetdiscover output); the migration guide no longer says it does;
// and the section's configuration, built strictly through the registry
// and given the output of the real ibnetdiscover on a simulated fabric
// (written to the file it names) and agent reports, gives every node
// under its leaf switch and in its reported NVLink domain.
func TestInfiniBandOnKubernetesDoc(t *testing.T) {
	t.Parallel()
	section := docSection(t, "../docs/kubernetes.md", ibDocSection)
	if !strings.Contains(section, "toposcope-agent does not run `ibnetdiscover`") {
		t.Errorf("%s no longer says that the agent does not run ibnetdiscover", ibDocSection)
	}
	var fields []string
	ft := reflect.TypeFor[providers.NodeFacts]()
	for i := range ft.NumField() {
		name, _, _ := strings.Cut(ft.Field(i).Tag.Get("json"), ",")
		fields = append(fields, name)
	}
	if !slices.Equal(fields, agentFacts) {
		t.Errorf("the agent's facts are now %v (the section describes %v): update docs/kubernetes.md %q, then agentFacts", fields, agentFacts, ibDocSection)
	}
	migrating, err := os.ReadFile("../docs/migrating-from-topograph.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(migrating), "\n") {
		if strings.HasPrefix(line, "| `infiniband-k8s` |") &&
			(!strings.Contains(line, "does **not** run `ibnetdiscover`") || !strings.Contains(line, "InfiniBand on Kubernetes")) {
			t.Errorf("docs/migrating-from-topograph.md, infiniband-k8s: %s", line)
		}
	}

	ibsim.Require(t)
	model, err := ibsim.Model(ibsim.ModelSpec{
		Links:  []string{"spine>leaf1", "spine>leaf2"},
		Leaves: map[string]string{"leaf1": "gpu[001-004]", "leaf2": "gpu[005-008]"},
	})
	if err != nil {
		t.Fatal(err)
	}
	fab, err := ibsim.Expand(model, ibsim.Expansion{Redundancy: []int{0, 2}})
	if err != nil {
		t.Fatal(err)
	}
	sim := ibsim.Start(t, fab)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := sim.Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const docPath = "/var/lib/toposcope/fabric/ibnetdiscover.out"
	block := yamlBlock(t, section)
	if !strings.Contains(block, docPath) {
		t.Fatalf("the section's configuration no longer reads %s:\n%s", docPath, block)
	}
	file := filepath.Join(t.TempDir(), "ibnetdiscover.out")
	if err := os.WriteFile(file, out, 0o600); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Provider struct {
			Name   string    `yaml:"name"`
			Params yaml.Node `yaml:"params"`
		} `yaml:"provider"`
	}
	if err := yaml.Unmarshal([]byte(strings.ReplaceAll(block, docPath, file)), &doc); err != nil {
		t.Fatal(err)
	}
	// Two NVLink domains of four, as the agents report them.
	const cluster = "7c1c6f5c-1a2b-4c3d-8e9f-0123456789ab"
	var reports memReports
	for i := range 8 {
		reports = append(reports, providers.AgentReport{ReceivedAt: time.Now(), Facts: providers.NodeFacts{
			Node: fmt.Sprintf("gpu%03d", i+1), GPUs: 4, Clique: fmt.Sprintf("%s.%d", cluster, i/4+1)}})
	}
	p, err := app.Registry().NewProvider(doc.Provider.Name, "provider", &doc.Provider.Params, providers.Deps{Agents: reports})
	if err != nil {
		t.Fatalf("the section's configuration: %v", err)
	}
	g, err := p.Discover(ctx, providers.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ibsim.Compare(g, model, fab); err != nil {
		t.Errorf("switch tree: %v", err)
	}
	for i := range 8 {
		name := fmt.Sprintf("gpu%03d", i+1)
		n, ok := g.Node(name)
		want := fmt.Sprintf("%s.%d", cluster, i/4+1)
		if !ok || n.Domain != want || n.Leaf == "" {
			t.Errorf("node %s: %+v, want under a leaf and in domain %s", name, n, want)
		}
	}
}

// TestAgentsDocExample: the configuration that docs/fabric.md gives for
// the agents provider builds through the registry (every key exists).
func TestAgentsDocExample(t *testing.T) {
	t.Parallel()
	block := yamlBlock(t, docSection(t, "../docs/fabric.md", "## `agents`"))
	var doc struct {
		Provider struct {
			Name   string    `yaml:"name"`
			Params yaml.Node `yaml:"params"`
		} `yaml:"provider"`
	}
	if err := yaml.Unmarshal([]byte(block), &doc); err != nil {
		t.Fatal(err)
	}
	if _, err := app.Registry().NewProvider(doc.Provider.Name, "provider", &doc.Provider.Params, providers.Deps{Agents: memReports{}}); err != nil {
		t.Errorf("docs/fabric.md, agents example:\n%s\n%v", block, err)
	}
}
