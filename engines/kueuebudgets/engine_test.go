package kueuebudgets_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/engines/kube"
	"github.com/toposcope/toposcope/engines/kueuebudgets"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/plugins"
	"github.com/toposcope/toposcope/testenv/golden"
	"github.com/toposcope/toposcope/topology"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// cluster is a graph of n nodes of gpus GPUs each.
func cluster(t *testing.T, n, gpus int) *topology.Graph {
	t.Helper()
	b := topology.NewBuilder()
	for i := range n {
		b.AddNode(topology.Node{Name: fmt.Sprintf("gpu%03d", i+1), GPUs: gpus})
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func printEngine(t *testing.T, edit func(*kueuebudgets.Config)) *kueuebudgets.Engine {
	t.Helper()
	cfg := kueuebudgets.DefaultConfig()
	cfg.Mode = kube.ModePrint
	if edit != nil {
		edit(&cfg)
	}
	e, err := kueuebudgets.New(cfg, nil, engines.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func sample(t *testing.T) *placement.Budgets {
	t.Helper()
	data, err := os.ReadFile("testdata/budgets.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b, err := placement.ParseBudgets(data)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRenderGolden: the sample tree on 16 nodes of 8 GPUs (128): the
// root and research Cohorts; nlp 57, vision 28, production 43, interns
// 0 GPUs (85.3 × 2/3, × 1/3, 128 × 1/3, rounded by largest remainder).
func TestRenderGolden(t *testing.T) {
	t.Parallel()
	e := printEngine(t, func(c *kueuebudgets.Config) { c.Flavor = "h100" })
	doc, err := e.RenderBudgets(t.Context(), cluster(t, 16, 8), eb(t, sample(t)))
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/budgets.golden.yaml", doc, *update)
}

// TestQuotasAddUp: whatever the shares, the leaves' quotas add up to the
// cluster's GPUs, and each is within one GPU of its exact share.
func TestQuotasAddUp(t *testing.T) {
	t.Parallel()
	e := printEngine(t, nil)
	for _, tc := range []struct {
		gpus   int
		shares []float64
	}{
		{128, []float64{1, 1, 1}},
		{100, []float64{1, 1, 1, 1, 1, 1, 1}},
		{7, []float64{3, 2.5, 0.001, 9}},
		{1024, []float64{0.3, 0.3, 0.4}},
	} {
		b := &placement.Budgets{}
		var sum float64
		for i, s := range tc.shares {
			b.Accounts = append(b.Accounts, placement.AccountSpec{Name: fmt.Sprintf("a%d", i), Shares: placement.Shares(s)})
			sum += s
		}
		doc, err := e.RenderBudgets(t.Context(), cluster(t, tc.gpus, 1), eb(t, b))
		if err != nil {
			t.Fatal(err)
		}
		quotas := nominalQuotas(t, doc)
		total := 0
		for i, s := range tc.shares {
			q := quotas[fmt.Sprintf("a%d", i)]
			total += q
			if exact := s / sum * float64(tc.gpus); float64(q) < exact-1 || float64(q) > exact+1 {
				t.Errorf("%d GPUs, shares %v: a%d has %d, exact %.2f", tc.gpus, tc.shares, i, q, exact)
			}
		}
		if total != tc.gpus {
			t.Errorf("%d GPUs, shares %v: quotas %v add up to %d", tc.gpus, tc.shares, quotas, total)
		}
	}
}

// nominalQuotas reads the ClusterQueues' quotas from a rendered List.
func nominalQuotas(t *testing.T, doc []byte) map[string]int {
	t.Helper()
	var list struct {
		Items []struct {
			Kind     string
			Metadata struct{ Name string }
			Spec     struct {
				ResourceGroups []struct {
					Flavors []struct {
						Resources []struct {
							NominalQuota string `yaml:"nominalQuota"`
						}
					}
				} `yaml:"resourceGroups"`
			}
		}
	}
	if err := yaml.Unmarshal(doc, &list); err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, it := range list.Items {
		if it.Kind != "ClusterQueue" {
			continue
		}
		var q int
		if _, err := fmt.Sscan(it.Spec.ResourceGroups[0].Flavors[0].Resources[0].NominalQuota, &q); err != nil {
			t.Fatal(err)
		}
		out[it.Metadata.Name] = q
	}
	return out
}

func TestRefuses(t *testing.T) {
	t.Parallel()
	e := printEngine(t, nil)
	g := cluster(t, 2, 8)
	one := func(s placement.AccountSpec) *placement.Budgets {
		return &placement.Budgets{Accounts: []placement.AccountSpec{s}}
	}
	for _, tc := range []struct {
		name string
		b    *placement.Budgets
		g    *topology.Graph
		want error
		msg  string
	}{
		{"no budgets", nil, g, engines.ErrNoBudgets, "no accounts"},
		{"not an object name", one(placement.AccountSpec{Name: "Research"}), g, engines.ErrInexpressible, `account "Research"`},
		{"root's name", one(placement.AccountSpec{Name: kueuebudgets.DefaultRoot}), g, engines.ErrInexpressible, "root Cohort"},
		{"useParent", one(placement.AccountSpec{Name: "a", UseParent: true}), g, engines.ErrInexpressible, "useParent"},
		{"share too fine", one(placement.AccountSpec{Name: "a", Shares: placement.Shares(0.0001)}), g, engines.ErrInexpressible, "precision"},
		{"no GPUs", one(placement.AccountSpec{Name: "a"}), cluster(t, 2, 0), engines.ErrInexpressible, "no GPUs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			doc, err := e.RenderBudgets(t.Context(), tc.g, eb(t, tc.b))
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) || doc != nil {
				t.Errorf("RenderBudgets = %d bytes, %v; want %v naming %q", len(doc), err, tc.want, tc.msg)
			}
		})
	}
	if err := e.Publish(context.Background(), g); !errors.Is(err, engines.ErrNoBudgets) {
		t.Errorf("Publish without budgets = %v, want ErrNoBudgets", err)
	}
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	f := kueuebudgets.NewFactory()
	for _, tc := range []struct{ doc, field string }{
		{"mode: print\nflavor: Not_Valid", "params.flavor"},
		{"mode: print\nroot: ''", "params.root"},
		{"mode: print\nresource: 'a b'", "params.resource"},
		{"mode: sideways", "params.mode"},
	} {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(tc.doc), &n); err != nil {
			t.Fatal(err)
		}
		_, err := f.New(n.Content[0], "params", engines.Deps{})
		if !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%q: %v, want config.ErrInvalid naming %s", tc.doc, err, tc.field)
		}
	}
}

// eb flattens placement budgets for the engine (plugins.EngineBudgets).
func eb(t testing.TB, b *placement.Budgets) *engines.Budgets {
	t.Helper()
	out, err := plugins.EngineBudgets(b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
