package kube

import (
	"errors"
	"maps"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/keys"
	"github.com/toposcope/toposcope/topology"
)

func TestLabelValue(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 64)
	tests := []struct {
		name, in, id string
		want         string // "" = only check validity and that it differs from in
		wantPrefix   string
	}{
		{name: "safe", in: "leaf02", id: "leaf02", want: "leaf02"},
		{name: "dots and underscores", in: "sw_1.a", id: "sw_1.a", want: "sw_1.a"},
		{name: "63 chars", in: long[:63], id: long[:63], want: long[:63]},
		{name: "64 chars", in: long, id: long, wantPrefix: strings.Repeat("a", 46) + "-"},
		{name: "trailing dash", in: "leaf-", id: "leaf-", wantPrefix: "leaf-"},
		{name: "ib node description", in: "MF0;sw-01:MQM9700/U1", id: "MF0;sw-01:MQM9700/U1", wantPrefix: "MF0-sw-01-MQM9700-U1-"},
		{name: "nothing usable", in: "::", id: "::", wantPrefix: "x"},
		{name: "empty", in: "", id: "", wantPrefix: "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := LabelValue(tt.in, tt.id)
			if msgs := validation.IsValidLabelValue(got); len(msgs) > 0 || got == "" {
				t.Fatalf("LabelValue(%q) = %q, invalid: %v", tt.in, got, msgs)
			}
			if tt.want != "" && got != tt.want {
				t.Errorf("LabelValue(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if tt.wantPrefix != "" && (!strings.HasPrefix(got, tt.wantPrefix) || len(got) != len(tt.wantPrefix)+labelHashLen) {
				t.Errorf("LabelValue(%q) = %q, want %q + 16 hex digits", tt.in, got, tt.wantPrefix)
			}
			if again := LabelValue(tt.in, tt.id); again != got {
				t.Errorf("not stable: %q then %q", got, again)
			}
		})
	}
	if LabelValue("a:b", "a:b") == LabelValue("a;b", "a;b") {
		t.Error("different IDs with the same sanitized prefix collide")
	}
}

func TestLabelConfigValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		edit  func(*LabelConfig)
		field string // "" = valid
	}{
		{name: "defaults", edit: func(*LabelConfig) {}},
		{name: "topograph", edit: func(c *LabelConfig) { c.Preset = PresetTopographV1 }},
		{name: "unknown preset", edit: func(c *LabelConfig) { c.Preset = "nope" }, field: "preset"},
		{name: "bad tier key", edit: func(c *LabelConfig) { c.TierLabels = []string{"a/b/c"} }, field: "tierLabels[0]"},
		{name: "duplicate key", edit: func(c *LabelConfig) { c.TierLabels = []string{"x.io/a", "x.io/a"} }, field: "tierLabels[1]"},
		{name: "hostname", edit: func(c *LabelConfig) { c.DomainLabel = keys.Hostname }, field: "domainLabel"},
		{name: "no domain", edit: func(c *LabelConfig) { c.DomainLabel = "-" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := DefaultLabelConfig()
			tt.edit(&c)
			err := c.Validate()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			var fe *config.FieldError
			if !errors.As(err, &fe) || fe.Field != tt.field {
				t.Fatalf("Validate = %v, want an error on %s", err, tt.field)
			}
		})
	}
}

func TestManaged(t *testing.T) {
	t.Parallel()
	def := DefaultLabelConfig()
	custom := DefaultLabelConfig()
	custom.TierLabels = []string{"example.com/leaf", "example.com/spine"}
	tests := []struct {
		cfg  LabelConfig
		key  string
		want bool
	}{
		{def, "topology.toposcope.io/tier-0", true},
		{def, "topology.toposcope.io/tier-12", true},
		{def, "topology.toposcope.io/tier-01", false},
		{def, "topology.toposcope.io/tier-", false},
		{def, "topology.toposcope.io/tier-x", false},
		{def, "topology.toposcope.io/accelerator-domain", true},
		{def, "topology.toposcope.io/other", false},
		{def, "fabric.topograph.run/tier-0", false},
		{custom, "example.com/spine", true},
		{custom, "topology.toposcope.io/tier-0", false},
		{custom, "topology.toposcope.io/accelerator-subdomain", true},
	}
	for _, tt := range tests {
		k := tt.cfg.Keys()
		if got := k.Managed(tt.key); got != tt.want {
			t.Errorf("Managed(%q) = %v, want %v", tt.key, got, tt.want)
		}
	}
}

// unevenGraph: core > spine > leaf1 > n1; core > leaf2 > n2 (a shorter
// path); n3 under no switch, in a domain; n4 nowhere.
func unevenGraph(t *testing.T) *topology.Graph {
	t.Helper()
	b := topology.NewBuilder()
	for _, n := range []string{"n1", "n2", "n3", "n4"} {
		b.AddNode(topology.Node{Name: n})
	}
	b.AddPath("n1", []topology.SwitchInfo{{ID: "leaf1"}, {ID: "spine"}, {ID: "core"}})
	b.AddPath("n2", []topology.SwitchInfo{{ID: "MF0;leaf:2"}, {ID: "core"}})
	b.AddToDomain("n1", "nvl1", "rack1")
	b.AddToDomain("n3", "nvl1", "")
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestNodeLabels(t *testing.T) {
	t.Parallel()
	g := unevenGraph(t)
	leaf2 := LabelValue(topology.SafeName("MF0;leaf:2"), "MF0;leaf:2")
	const p = "topology.toposcope.io/"
	tests := []struct {
		name     string
		edit     func(*LabelConfig)
		node     string
		want     map[string]string
		wantAnno map[string]string
	}{
		{name: "full path", node: "n1", want: map[string]string{p + "tier-0": "leaf1", p + "tier-1": "spine", p + "tier-2": "core", p + "accelerator-domain": "nvl1", p + "accelerator-subdomain": "rack1"}},
		{name: "short path filled", node: "n2", want: map[string]string{p + "tier-0": leaf2, p + "tier-1": "core", p + "tier-2": "core"},
			wantAnno: map[string]string{p + "tier-0": "MF0;leaf:2"}},
		{name: "short path not filled", node: "n2", edit: func(c *LabelConfig) { c.FillTiers = false },
			want: map[string]string{p + "tier-0": leaf2, p + "tier-1": "core"}, wantAnno: map[string]string{p + "tier-0": "MF0;leaf:2"}},
		{name: "domain only", node: "n3", want: map[string]string{p + "accelerator-domain": "nvl1"}},
		{name: "nowhere", node: "n4", want: map[string]string{}},
		{name: "topograph", node: "n1", edit: func(c *LabelConfig) { c.Preset = PresetTopographV1 },
			want: map[string]string{"fabric.topograph.run/tier-0": "leaf1", "fabric.topograph.run/tier-1": "spine", "fabric.topograph.run/tier-2": "core",
				"accelerator.topograph.run/domain": "nvl1", "accelerator.topograph.run/sub-domain": "rack1"}},
		{name: "custom tiers cut", node: "n1", edit: func(c *LabelConfig) { c.TierLabels = []string{"x.io/leaf"}; c.DomainLabel = "-" },
			want: map[string]string{"x.io/leaf": "leaf1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := DefaultLabelConfig()
			if tt.edit != nil {
				tt.edit(&c)
			}
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			n, _ := g.Node(tt.node)
			labels, anno := c.Keys().NodeLabels(g, n)
			if !maps.Equal(labels, tt.want) {
				t.Errorf("labels = %v, want %v", labels, tt.want)
			}
			if tt.wantAnno == nil {
				tt.wantAnno = map[string]string{}
			}
			if !maps.Equal(anno, tt.wantAnno) {
				t.Errorf("annotations = %v, want %v", anno, tt.wantAnno)
			}
		})
	}
}
