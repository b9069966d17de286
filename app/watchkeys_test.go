package app_test

import (
	"slices"
	"testing"

	"github.com/toposcope/toposcope/app"
	"github.com/toposcope/toposcope/plugins"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/k8slabels"
	"github.com/toposcope/toposcope/providers/sim"
)

// TestWatchKeys: the node watcher's default keys are the union of what
// the registered providers declare, each once and sorted; the k8s-labels
// provider's keys are there as its own constants give them.
func TestWatchKeys(t *testing.T) {
	t.Parallel()
	r := app.Registry()
	got := app.WatchKeys(r)
	if !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
		t.Errorf("WatchKeys = %v, want sorted and each once", got)
	}
	declared := 0
	for _, f := range r.Providers() {
		for _, k := range f.WatchKeys {
			declared++
			if !slices.Contains(got, k) {
				t.Errorf("provider %s declares %s, which the union leaves out", f.Name, k)
			}
		}
	}
	for _, k := range got {
		if !slices.ContainsFunc(r.Providers(), func(f providers.Factory) bool { return slices.Contains(f.WatchKeys, k) }) {
			t.Errorf("the union has %s, which no provider declares", k)
		}
	}
	if declared == 0 {
		t.Fatal("no registered provider declares a key")
	}
	for _, k := range []string{k8slabels.GKEBlockLabel, k8slabels.CrusoePodLabel, k8slabels.AWSLayerPrefix + "*"} {
		if !slices.Contains(got, k) {
			t.Errorf("WatchKeys lacks the k8s-labels provider's %s", k)
		}
	}

	// Two providers declaring overlapping keys: each key once, sorted.
	a, b := sim.NewFactory(), k8slabels.NewFactory()
	a.WatchKeys = []string{"z.io/x", b.WatchKeys[0]}
	two, err := plugins.New(plugins.Lists{Providers: []providers.Factory{a, b}})
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Sorted(slices.Values(append(slices.Clone(b.WatchKeys), "z.io/x")))
	if got := app.WatchKeys(two); !slices.Equal(got, want) {
		t.Errorf("WatchKeys(two) = %v, want %v", got, want)
	}
	none, err := plugins.New(plugins.Lists{Providers: []providers.Factory{sim.NewFactory()}})
	if err != nil {
		t.Fatal(err)
	}
	if got := app.WatchKeys(none); len(got) != 0 {
		t.Errorf("WatchKeys of a provider that reads no Node = %v, want none", got)
	}
}
