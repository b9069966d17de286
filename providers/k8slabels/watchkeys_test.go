package k8slabels_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/keys"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/k8slabels"
	"github.com/toposcope/toposcope/providers/nvlink"
)

// watchFixture are Nodes that carry every key family the provider reads:
// EKS layers with the clique label and the well-known zone and region,
// GKE labels with toposcope's own annotations, Topograph's annotations
// alone, and Crusoe's labels. Each also carries a key nobody reads.
func watchFixture() []k8slabels.StaticNode {
	return []k8slabels.StaticNode{
		{Name: "a", ProviderID: "aws:///us-east-1a/i-0a", GPUs: 4, Labels: map[string]string{
			k8slabels.AWSLayerPrefix + "1": "nn-top", k8slabels.AWSLayerPrefix + "2": "nn-leaf",
			nvlink.CliqueLabel: clique, keys.Hostname: "host-a",
			keys.TopologyZone: "us-east-1a", keys.TopologyRegion: "us-east-1", "team": "ml",
		}},
		{Name: "g", ProviderID: "gce://p/us-central1-b/g", GPUs: 8, Labels: map[string]string{
			k8slabels.GKEBlockLabel: "b1", k8slabels.GKESubblockLabel: "sb1", k8slabels.GKEHostLabel: "h1", "team": "ml",
		}, Annotations: map[string]string{
			keys.InstanceID: "i-g", keys.Region: "r-g", keys.NVLinkClique: clique, keys.NVLinkRack: "rack1", "note": "x",
		}},
		{Name: "t", GPUs: 8, Annotations: map[string]string{
			keys.TopographInstance: "i-t", keys.TopographRegion: "r-t", keys.TopographClusterID: clique, "note": "x",
		}},
		{Name: "c", GPUs: 8, Labels: map[string]string{
			k8slabels.CrusoePartitionLabel: "part1", k8slabels.CrusoePodLabel: "pod1", "team": "ml",
		}},
	}
}

// answer is what the provider says about nodes with cfg, for every node
// and for a request naming a node by its host name.
func answer(t *testing.T, cfg k8slabels.Config, nodes []k8slabels.StaticNode) string {
	t.Helper()
	cfg.Nodes = nodes
	p, err := k8slabels.New(cfg, nil, providers.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, req := range []providers.Request{{}, {Nodes: []providers.NodeRef{{Name: "host-a"}}}} {
		g, err := p.Discover(context.Background(), req)
		if err != nil {
			out = append(out, "error: "+err.Error())
			continue
		}
		b, err := json.Marshal(g)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return strings.Join(out, "\n")
}

// watched reports whether key is one of keys or under one of their
// prefixes (a key ending in "*"), as the node watcher matches.
func watched(keys []string, key string) bool {
	for _, k := range keys {
		if p, ok := strings.CutSuffix(k, "*"); ok && strings.HasPrefix(key, p) || k == key {
			return true
		}
	}
	return false
}

// TestWatchKeysAreWhatDiscoverReads changes, one at a time, every label
// and annotation of Nodes that carry all the keys the provider reads,
// under the tier sources that read them: a change that changes the
// answer must be to a watched key, and every watched key must change the
// answer somewhere (nothing declared that is not read).
func TestWatchKeysAreWhatDiscoverReads(t *testing.T) {
	t.Parallel()
	declared := k8slabels.NewFactory().WatchKeys
	if !slices.Equal(declared, k8slabels.WatchKeys()) {
		t.Fatalf("the factory declares %v, the package's WatchKeys are %v", declared, k8slabels.WatchKeys())
	}
	gke := k8slabels.DefaultConfig()
	gke.GKEHost = true
	crusoe := k8slabels.DefaultConfig()
	crusoe.Tiers = k8slabels.TiersCrusoe
	mattered := map[string]bool{}
	for _, cfg := range []k8slabels.Config{gke, crusoe} {
		base := watchFixture()
		want := answer(t, cfg, base)
		for i, n := range base {
			for _, kind := range []string{"label", "annotation"} {
				m := n.Labels
				if kind == "annotation" {
					m = n.Annotations
				}
				for key, v := range m {
					changed := watchFixture()
					target := changed[i].Labels
					if kind == "annotation" {
						target = changed[i].Annotations
					}
					target[key] = v + "0"
					if strings.Contains(v, ".") && key != keys.TopologyRegion { // a clique: keep it parsable
						target[key] = strings.Replace(v, "32766", "32767", 1)
					}
					if answer(t, cfg, changed) == want {
						continue
					}
					for _, d := range declared {
						if watched([]string{d}, key) {
							mattered[d] = true
						}
					}
					if !watched(declared, key) {
						t.Errorf("tiers %s: changing %s %s of node %s changes the answer, but it is not in WatchKeys", cfg.Tiers, kind, key, n.Name)
					}
				}
			}
		}
	}
	for _, d := range declared {
		if !mattered[d] {
			t.Errorf("WatchKeys declares %s, but no change to it changed the answer", d)
		}
	}
	if len(mattered) == 0 {
		t.Fatal("no change changed the answer: the fixture is not read")
	}
}
